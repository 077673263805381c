import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.ts';
import { DEFAULT_SHELL_SETTINGS, type ShellSettings } from '../../src/worker/tools/shell-settings.ts';
import { workerTraces } from '../../src/telemetry/traces-configured.ts';
import { Worker } from '../../src/worker/worker.ts';
import type { WorkerOptions } from '../../src/worker/worker-options.ts';
import { startTestApp, type TestApp } from './app.ts';
import { executionApi, type ExecutionApi } from './execution-api.ts';

export type TestStack = TestApp & ExecutionApi & { workers: Worker[] };

/** SVC_SHELL_SANDBOX=off, for tests whose shell tasks coordinate with the test through host files (gates, pid files). */
export const UNSANDBOXED_SHELL: ShellSettings = { ...DEFAULT_SHELL_SETTINGS, sandbox: false };

/** A real server on a fresh database plus real workers talking to it over HTTP. */
export async function startTestStack(
  opts: {
    workers?: number;
    concurrency?: number;
    env?: Record<string, string>;
    /** Extra worker options (e.g. short heartbeat intervals), applied to every worker. */
    workerOptions?: Partial<Pick<WorkerOptions, 'idleHeartbeatIntervalMs' | 'busyHeartbeatIntervalMs' | 'claimWaitMs' | 'shell'>>;
  } = {},
): Promise<TestStack> {
  const t = await startTestApp(opts.env);
  const workers: Worker[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      t.logs.push(String(chunk));
      cb();
    },
  });
  for (let i = 0; i < (opts.workers ?? 1); i++) {
    const w = new Worker({
      serverUrl: t.url,
      token: t.workerToken,
      concurrency: opts.concurrency ?? 4,
      env: { ...process.env, ...opts.env },
      log: createLogger('debug', sink),
      serviceDatabaseUrl: opts.env?.SVC_ALLOW_SERVICE_DB_TASKS === 'true' ? t.databaseUrl : undefined,
      claimWaitMs: 2_000,
      // As `svc start` wires its pools: traces as the server's config says.
      traces: workerTraces(t.deps.config),
      ...opts.workerOptions,
    });
    await w.start();
    workers.push(w);
  }
  const stack: TestStack = {
    ...t,
    workers,
    ...executionApi(t.url),
    async close() {
      for (const w of workers) await w.stop();
      await t.close();
    },
  };
  return stack;
}
