import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ensurePackage } from '../scripts/ensure-package.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger, type Logger } from '../src/log.ts';
import { startService, type RunningService } from '../src/service.ts';
import { Worker } from '../src/worker/worker.ts';
import { api, type Json } from './http-client.ts';
import { sleep } from './stats.ts';

export { api, closeApiAgent, type Json } from './http-client.ts';

export const BENCH_LOG_LEVEL = 'warn';
// Long polls of idle workers end after this; short so that a drained pool stops quickly.
export const BENCH_CLAIM_WAIT_MS = 2_000;

export type BenchService = {
  svc: RunningService;
  url: string;
  log: Logger;
  register(yaml: string): Promise<void>;
  /** Starts an execution of the newest playbook at path; returns its id. */
  run(path: string, payload?: Json): Promise<number>;
  /**
   * Polls GET /api/executions/{id} every pollMs (after sleeping firstPollAfterMs) until it is
   * terminal; returns the status object and how many GETs it took.
   */
  wait(id: number, pollMs: number, opts?: { timeoutMs?: number; firstPollAfterMs?: number }): Promise<{ execution: Json; polls: number }>;
  /** Every event of an execution (paged GET /api/events/{id}). */
  events(id: number): Promise<Json[]>;
  /** An in-process worker pool, as `svc start` runs it: its long polls over HTTP, the rest in process (src/worker/server-client.ts). */
  worker(concurrency: number): Promise<Worker>;
};

/** The whole server in this process (startService) on 127.0.0.1 port 0 over the given database; `env` adds settings. */
export async function startBenchService(databaseUrl: string, dataDir: string, env: Record<string, string> = {}): Promise<BenchService> {
  // As `npm start` does: without bubblewrap its workers refuse shell tasks (and log an error).
  ensurePackage('bubblewrap', 'bwrap', 'sandboxed shell tasks', { optional: true });
  const log = createLogger(BENCH_LOG_LEVEL);
  const config = loadConfig({
    SVC_DATABASE_URL: databaseUrl,
    SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_DATA_DIR: join(dataDir, 'svc'),
    SVC_PORT: '0',
    SVC_HOST: '127.0.0.1',
    SVC_LOG_LEVEL: BENCH_LOG_LEVEL,
    SVC_WORKER_CONCURRENCY: '0',
    SVC_WORKER_TOKEN: randomBytes(32).toString('base64url'),
    // The command reaper sweeps every second (its most frequent setting), unless the environment
    // says otherwise: SVC_COMMAND_REAPER_ENABLED=false npm run bench gives the figures without it.
    SVC_COMMAND_REAPER_INTERVAL_SECONDS: process.env.SVC_COMMAND_REAPER_INTERVAL_SECONDS ?? '1',
    ...(process.env.SVC_COMMAND_REAPER_ENABLED ? { SVC_COMMAND_REAPER_ENABLED: process.env.SVC_COMMAND_REAPER_ENABLED } : {}),
    ...env,
  });
  const svc = await startService(config, { log });
  const url = svc.url;
  return {
    svc,
    url,
    log,
    async register(yaml) {
      await api(url, 'POST', '/api/catalog/playbook', { content: yaml });
    },
    async run(path, payload = {}) {
      const r = await api<{ execution_id: number }>(url, 'POST', '/api/run/playbook', { path, payload });
      return r.execution_id;
    },
    async wait(id, pollMs, opts = {}) {
      const until = Date.now() + (opts.timeoutMs ?? 60_000);
      if (opts.firstPollAfterMs) await sleep(opts.firstPollAfterMs);
      for (let polls = 1; ; polls++) {
        const execution = await api(url, 'GET', `/api/executions/${id}`);
        if (execution.status !== 'running') return { execution, polls };
        if (Date.now() > until) throw new Error(`execution ${id} still running after ${opts.timeoutMs ?? 60_000} ms`);
        await sleep(pollMs);
      }
    },
    async events(id) {
      const all: Json[] = [];
      let since = 0;
      for (;;) {
        const page = await api<{ events: Json[]; next_since_event_id: number }>(url, 'GET', `/api/events/${id}?since_event_id=${since}&limit=5000`);
        all.push(...page.events);
        if (page.events.length < 5000) return all;
        since = page.next_since_event_id;
      }
    },
    async worker(concurrency) {
      const w = new Worker({ serverUrl: url, inProcess: svc.inProcess, token: svc.deps.workerToken, concurrency, env: {}, log, claimWaitMs: BENCH_CLAIM_WAIT_MS });
      await w.start();
      return w;
    },
  };
}

/** A sequential playbook of `steps` steps, each one noop task, each `next:` the following step. */
export function sequentialPlaybook(path: string, steps: number): string {
  const lines = ['apiVersion: svc/v1', 'kind: Playbook', `metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }`, 'workflow:'];
  for (let i = 1; i <= steps; i++) {
    lines.push(`  - step: s${i}`, `    tool: { name: t, kind: noop }`);
    if (i < steps) lines.push(`    next: s${i + 1}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * A playbook whose one step runs a noop task once per item of `workload.items`, one item at a
 * time; with `hold`, a step after it waits for the signal `go`, so the execution stays running.
 */
export function sequentialLoopPlaybook(path: string, opts: { hold?: boolean } = {}): string {
  const hold = opts.hold ? ['    next: hold', '  - step: hold', '    wait: { signal: go }'] : [];
  return [
    'apiVersion: svc/v1',
    'kind: Playbook',
    `metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }`,
    'workload: { items: [] }',
    'workflow:',
    '  - step: start',
    '    loop: { in: "{{ workload.items }}", iterator: item, mode: sequential }',
    '    tool: { name: t, kind: noop }',
    ...hold,
    '',
  ].join('\n');
}
