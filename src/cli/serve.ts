import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GUI_DIST_DIR } from '../gui-files.ts';
import { loadConfig, type Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { closeInheritedFds } from '../close-inherited-fds.ts';
import type { Worker } from '../worker/worker.ts';
import { shellSettings } from '../worker/tools/shell-settings.ts';
import { processEnvironment } from '../secret-environment.ts';
import { workerTraces } from '../telemetry/traces-configured.ts';
import { workerConcurrency } from './worker-concurrency.ts';

// The commands that serve until a signal stops them (svc start, server, worker): each traps the
// signal first and imports the heavy modules (the service, the worker pool) only when it runs.

/**
 * Exit codes for a second signal, which abandons the drain: what a shell reports for a process
 * killed by the signal (128 + n). A stop that the first signal asked for and that went cleanly,
 * during start or after, exits 0, as service managers expect of a requested stop.
 */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

type SignalTrap = {
  /** The first SIGINT/SIGTERM received, if any. */
  readonly received: StopSignal | undefined;
  /** Resolves with the first signal. */
  readonly requested: Promise<StopSignal>;
};

/**
 * Traps SIGINT/SIGTERM from now on, so a signal that arrives while the service is still starting
 * is handled by us (stop what has started) rather than killing the process halfway. The first
 * signal resolves `requested`; a second one exits at once.
 */
function trapSignals(): SignalTrap {
  let received: StopSignal | undefined;
  let resolve: (signal: StopSignal) => void = () => {};
  const requested = new Promise<StopSignal>((r) => (resolve = r));
  const handler = (signal: StopSignal) => {
    if (received) {
      process.stderr.write(`${signal} again: exiting now\n`);
      process.exit(SIGNAL_EXIT_CODES[signal]);
    }
    received = signal;
    process.stderr.write(`\n${signal}: stopping…\n`);
    resolve(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    get received() {
      return received;
    },
    requested,
  };
}

/** Runs stop once the trap fires: 0 when stopped cleanly, 1 when stopping failed. */
async function stopOnSignal(trap: SignalTrap, stop: () => Promise<void>): Promise<number> {
  await trap.requested;
  return stopNow(stop);
}

async function stopNow(stop: () => Promise<void>): Promise<number> {
  try {
    await stop();
    return 0;
  } catch (err) {
    process.stderr.write(`error while stopping: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** Stops `worker`, saying on stderr what its drain waits for meanwhile (src/cli/drain-report.ts). */
async function drainSaying(worker: Worker, signal: StopSignal | undefined): Promise<void> {
  const { reportDrain } = await import('./drain-report.ts');
  await reportDrain(() => worker.drainState(), worker.stop(), signal ?? 'SIGTERM');
}

/** `svc start` (`withWorkers`) and `svc server`: the service until a signal stops it; the exit code. */
export async function serve(config: Config, withWorkers: boolean): Promise<number> {
  const trap = trapSignals();
  const { startService } = await import('../service.ts');
  const { stopEmbeddedDatabases } = await import('../db/embedded.ts');
  const log = createLogger(config.SVC_LOG_LEVEL);
  // Before anything is spawned (the embedded PostgreSQL, tasks): nothing inherited reaches them.
  closeInheritedFds(log);
  const t0 = performance.now();
  // A signal during start stops the embedded PostgreSQL (or cancels its start); the start then
  // fails, or finishes and is stopped below. Either way nothing is left running.
  let starting = true;
  void trap.requested.then(() => (starting ? stopEmbeddedDatabases() : undefined)).catch(() => {});
  let svc: Awaited<ReturnType<typeof startService>>;
  try {
    svc = await startService(config, { log });
  } catch (err) {
    // Stopped under it by the signal (the embedded PostgreSQL went, or its start was cancelled).
    if (trap.received) return 0;
    throw err;
  } finally {
    starting = false;
  }
  let worker: Worker | undefined;
  const stop = async () => {
    if (worker) await drainSaying(worker, trap.received);
    await svc.stop();
  };
  if (withWorkers && config.SVC_WORKER_CONCURRENCY > 0 && !trap.received) {
    // Only here: `svc server` loads none of the worker's modules (its tools, undici, the keychain).
    const { Worker: WorkerPool } = await import('../worker/worker.ts');
    worker = new WorkerPool({
      serverUrl: svc.url,
      inProcess: svc.inProcess,
      token: svc.deps.workerToken,
      concurrency: config.SVC_WORKER_CONCURRENCY,
      env: processEnvironment(),
      log,
      serviceDatabaseUrl: config.SVC_ALLOW_SERVICE_DB_TASKS === 'on' ? svc.databaseUrl : undefined,
      serviceReaderUrl: await svc.readerDatabaseUrl(),
      shell: shellSettings(config),
      outputBytes: config.SVC_TASK_OUTPUT_BYTES,
      traces: workerTraces(config),
    });
    await worker.start().catch(async (err: unknown) => {
      await svc.stop();
      throw err;
    });
  }
  if (trap.received) return stopNow(stop);
  const lines = [
    `svc ${withWorkers ? 'started' : 'server started'} in ${Math.round(performance.now() - t0)} ms`,
    `  console  ${existsSync(join(GUI_DIST_DIR, 'index.html')) ? `${svc.url}/ui/` : 'not built (npm run build:gui)'}`,
    `  API      ${svc.url}/api`,
    `  docs     ${svc.url}/docs  (ReDoc: ${svc.url}/redoc)`,
    `  health   ${svc.url}/api/health`,
    `  database ${svc.embedded ? `embedded PostgreSQL, data in ${svc.dataDir}` : 'SVC_DATABASE_URL'}`,
    `  workers  ${worker ? `${config.SVC_WORKER_CONCURRENCY} in-process slots (${worker.name})` : 'none in process (run `svc worker`)'}`,
    `Ctrl-C stops it.`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  return stopOnSignal(trap, stop);
}

/** `svc worker`: a worker pool claiming from its server until a signal drains it; the exit code. */
export async function workerCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { server: { type: 'string' }, concurrency: { type: 'string' } }, strict: true });
  const trap = trapSignals();
  const { Worker: WorkerPool } = await import('../worker/worker.ts');
  const config = loadConfig();
  const log = createLogger(config.SVC_LOG_LEVEL);
  const concurrency = workerConcurrency(values.concurrency, config.SVC_WORKER_CONCURRENCY);
  // Before the pool probes the sandbox or runs a task (a usage error above starts nothing):
  // nothing inherited reaches them.
  closeInheritedFds(log);
  const { readWorkerToken } = await import('../auth/worker-token.ts');
  const token = await readWorkerToken({ configured: config.SVC_WORKER_TOKEN, dataDir: config.SVC_DATA_DIR });
  const worker = new WorkerPool({
    serverUrl: values.server ?? config.SVC_SERVER_URL,
    token,
    concurrency,
    env: processEnvironment(),
    log,
    serviceDatabaseUrl: config.SVC_ALLOW_SERVICE_DB_TASKS === 'on' ? config.SVC_DATABASE_URL : undefined,
    // read_only tasks without auth: the same database as the reader role (its login from the server), never this user.
    serviceReaderBaseUrl: config.SVC_ALLOW_SERVICE_DB_TASKS !== 'off' ? config.SVC_DATABASE_URL : undefined,
    shell: shellSettings(config),
    outputBytes: config.SVC_TASK_OUTPUT_BYTES,
    traces: workerTraces(config),
  });
  // A signal while the worker still waits for its server ends the wait.
  void trap.requested.then(() => worker.stop());
  await worker.start();
  if (trap.received) return stopNow(() => worker.stop());
  process.stdout.write(`worker ${worker.name} claiming from ${worker.client.baseUrl} with ${concurrency} slots\n`);
  return stopOnSignal(trap, () => drainSaying(worker, trap.received));
}
