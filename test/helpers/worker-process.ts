// Real `svc worker` processes for end-to-end tests: DESIGN.md asks that feature tests run through
// workers that reach the server over HTTP only, as in production, not through an in-process pool.
import { startTestApp, type TestApp } from './app.ts';
import { executionApi, type ExecutionApi } from './execution-api.ts';
import { spawnSvc, withTimeout, type SvcProcess } from './process.ts';

export type WorkerProcess = {
  /** The pool name the worker registered under (from its start line). */
  name: string;
  pid: number;
  output(): string;
  exited: Promise<number | null>;
  /** SIGTERM (drain: running commands finish and report), then waits for the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL, then waits for the process to be gone. */
  kill(): Promise<void>;
};

export type WorkerProcessOptions = {
  /** SVC_WORKER_CONCURRENCY (default 4). */
  concurrency?: number;
  /** Added to the worker's clean environment (e.g. SVC_ALLOW_SERVICE_DB_TASKS, SVC_DATABASE_URL). */
  env?: Record<string, string>;
  /** How long the worker may take to register (Node start and imports included). */
  startTimeoutMs?: number;
};

const START_LINE = /^worker (\S+) claiming from \S+ with \d+ slots$/m;

/**
 * Spawns `node src/cli.ts worker` against `serverUrl` (SVC_SERVER_URL) and resolves once it has
 * registered: the worker prints its start line only after `POST /api/worker/pool/register` answered.
 */
export async function startWorkerProcess(serverUrl: string, opts: WorkerProcessOptions = {}): Promise<WorkerProcess> {
  const p = spawnSvc(['worker'], {
    SVC_SERVER_URL: serverUrl,
    SVC_WORKER_CONCURRENCY: String(opts.concurrency ?? 4),
    ...opts.env,
  });
  let code: number | null | undefined;
  void p.exited.then((c) => (code = c));
  const timeoutMs = opts.startTimeoutMs ?? 20_000;
  const t0 = Date.now();
  let match: RegExpExecArray | null;
  while (!(match = START_LINE.exec(p.output()))) {
    if (code !== undefined) throw new Error(`svc worker exited with ${code} before registering:\n${p.output()}`);
    if (Date.now() - t0 > timeoutMs) {
      p.kill('SIGKILL');
      throw new Error(`svc worker did not register within ${timeoutMs} ms:\n${p.output()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return wrap(p, match[1]);
}

function wrap(p: SvcProcess, name: string): WorkerProcess {
  let stopping: Promise<number | null> | undefined;
  return {
    name,
    pid: p.proc.pid ?? 0,
    output: p.output,
    exited: p.exited,
    stop(timeoutMs = 30_000) {
      stopping ??= (async () => {
        if (p.proc.exitCode === null && p.proc.signalCode === null) p.kill('SIGTERM');
        try {
          return await withTimeout(p.exited, timeoutMs, `svc worker ${name} drain`);
        } catch (error) {
          // A drain that hangs is a failure worth reporting, but must not leave the process behind.
          p.kill('SIGKILL');
          await p.exited;
          throw error;
        }
      })();
      return stopping;
    },
    async kill() {
      p.kill('SIGKILL');
      await p.exited;
    },
  };
}

export type WorkerStack = TestApp & ExecutionApi & { workers: WorkerProcess[] };

/**
 * A real server on a fresh database (in this process, so tests can read its database) and
 * `workers` real `svc worker` processes talking to it over HTTP. `close()` drains the workers
 * with SIGTERM and fails when one does not exit 0.
 */
export async function startWorkerStack(
  opts: { workers?: number; concurrency?: number; env?: Record<string, string>; workerEnv?: Record<string, string>; serviceDbTasks?: boolean | 'read_only' } = {},
): Promise<WorkerStack> {
  const t = await startTestApp(opts.env);
  // Postgres tasks without `auth` use the service database only when the worker is told both.
  const dbEnv: Record<string, string> = opts.serviceDbTasks ? { SVC_ALLOW_SERVICE_DB_TASKS: String(opts.serviceDbTasks), SVC_DATABASE_URL: t.databaseUrl } : {};
  let workers: WorkerProcess[] = [];
  try {
    workers = await Promise.all(
      Array.from({ length: opts.workers ?? 1 }, () => startWorkerProcess(t.url, { concurrency: opts.concurrency, env: { SVC_WORKER_TOKEN: t.workerToken, ...dbEnv, ...opts.workerEnv } })),
    );
  } catch (error) {
    await t.close();
    throw error;
  }
  return {
    ...t,
    workers,
    ...executionApi(t.url),
    async close() {
      const codes = await Promise.allSettled(workers.map((w) => w.stop()));
      await t.close();
      const bad = codes.flatMap((c, i) =>
        c.status === 'rejected' ? [`${workers[i].name}: ${String(c.reason)}`] : c.value !== 0 ? [`${workers[i].name} exited ${c.value}:\n${workers[i].output()}`] : [],
      );
      if (bad.length) throw new Error(`worker processes did not drain cleanly:\n${bad.join('\n')}`);
    },
  };
}
