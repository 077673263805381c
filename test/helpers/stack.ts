import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.ts';
import { Worker, type WorkerOptions } from '../../src/worker/worker.ts';
import { startTestApp, type TestApp } from './app.ts';
import { http, type Json } from './http.ts';

export type TestStack = TestApp & {
  workers: Worker[];
  /** Registers a playbook (YAML text) and returns its catalog answer. */
  register(yaml: string): Promise<Json>;
  /** Starts an execution and returns its id. */
  run(path: string, payload?: Record<string, unknown>): Promise<number>;
  /** Polls until the execution is terminal; returns its status object. */
  wait(executionId: number, timeoutMs?: number): Promise<Json>;
  events(executionId: number): Promise<Json[]>;
};

/** A real server on a fresh database plus real workers talking to it over HTTP. */
export async function startTestStack(
  opts: {
    workers?: number;
    concurrency?: number;
    env?: Record<string, string>;
    /** Extra worker options (e.g. short heartbeat intervals), applied to every worker. */
    workerOptions?: Partial<Pick<WorkerOptions, 'idleHeartbeatIntervalMs' | 'busyHeartbeatIntervalMs' | 'claimWaitMs'>>;
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
      concurrency: opts.concurrency ?? 4,
      env: { ...process.env, ...opts.env },
      log: createLogger('debug', sink),
      serviceDatabaseUrl: opts.env?.SVC_ALLOW_SERVICE_DB_TASKS === 'true' ? t.databaseUrl : undefined,
      claimWaitMs: 2_000,
      ...opts.workerOptions,
    });
    await w.start();
    workers.push(w);
  }
  const stack: TestStack = {
    ...t,
    workers,
    async register(yaml) {
      const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: yaml });
      if (r.status !== 201) throw new Error(`register failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async run(path, payload = {}) {
      const r = await http(t.url, 'POST', '/api/run/playbook', { path, payload });
      if (r.status !== 200) throw new Error(`run failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.execution_id;
    },
    async wait(id, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await http(t.url, 'GET', `/api/executions/${id}`);
        if (r.body.status !== 'running') return r.body;
        if (Date.now() > until) throw new Error(`execution ${id} still running after ${timeoutMs} ms: ${JSON.stringify(r.body)}`);
        await new Promise((ok) => setTimeout(ok, 25));
      }
    },
    async events(id) {
      return (await http(t.url, 'GET', `/api/events/${id}`)).body.events;
    },
    async close() {
      for (const w of workers) await w.stop();
      await t.close();
    },
  };
  return stack;
}
