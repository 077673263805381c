import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { EVENT } from '../machines/event-types.ts';
import { fmt, type Row } from './report.ts';
import { request } from './http-client.ts';
import { sequentialPlaybook, type BenchService } from './service.ts';
import { quantile, round, sleep } from './stats.ts';

// The batch intake run: POST /api/events/batch at a fixed arrival rate from a load process of its
// own; ack latency, errors, events routed per second, and a reconciliation afterwards that every
// accepted event is in the log exactly once.

export const BATCH_TARGET_RATE = 300;
export const BATCH_TARGET_P99_MS = 15;
export const BATCH_EVENTS = 10;
// Each run starts with this long at its rate whose latencies are reported apart (warmupAckMs): the
// first seconds after a start or a change of rate run code V8 has not yet optimised (p99 29 ms
// with them, 21-24 ms without, at 300/s). The warm-up's batches are reconciled like the rest.
const BATCH_WARMUP_SECONDS = 3;
/** Executions whose held commands the batches report on, in turn (`--batch-executions` changes it). */
export const BATCH_EXECUTIONS = 64;
const WORKER = 'bench-load';
const LOAD_READY_TIMEOUT_MS = 15_000;
const DRAIN_TIMEOUT_MS = 180_000;
const DRAIN_POLL_MS = 100;
const DRAIN_STALL_MS = 5_000;

type AckSummary = { p50: number; p90: number; p99: number; max: number };

/** Ack latencies (ms) as the results report them. */
const ackSummary = (ms: number[]): AckSummary => ({ p50: round(quantile(ms, 0.5)), p90: round(quantile(ms, 0.9)), p99: round(quantile(ms, 0.99)), max: round(Math.max(...ms, 0)) });

export type BatchRunResult = {
  rate: number;
  seconds: number;
  eventsPerBatch: number;
  /** How many executions the batches went to, in turn. */
  executions: number;
  sent: number;
  accepted: number;
  errors: Record<string, number>;
  /** Of the batches after the warm-up. */
  ackMs: AckSummary;
  /** Of the warm-up's batches (BATCH_WARMUP_SECONDS at the same rate, just before). */
  warmupAckMs: AckSummary;
  /** How late the load process sent its batches (its own lag), p99. */
  sendLagP99Ms: number;
  /** Routed events over the time from the first acceptance to the last batch completed (database clock). */
  eventsRoutedPerSecond: number;
  /** After the last send, until every batch was completed or failed. */
  drainMs: number;
  /** From batch.completed: the processing call's wall clock, and how many batches one call took. */
  processingMs: { p50: number; p99: number };
  batchesPerCall: number;
  reconciliation: { acceptedEvents: number; storedOnce: number; lost: number; duplicated: number; misplaced: number; unexpected: number; failedBatches: number };
  meetsTarget: boolean;
};

/** The load process (bench/batch-load.ts); its CPU is not the server's. */
class BatchLoad {
  readonly #child: ChildProcess;
  readonly #lines: AsyncIterator<string>;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  static async start(serverUrl: string): Promise<BatchLoad> {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'batch-load.ts'), serverUrl], { stdio: ['pipe', 'pipe', 'inherit'] });
    const load = new BatchLoad(child);
    const ready = await Promise.race([load.#lines.next(), sleep(LOAD_READY_TIMEOUT_MS).then(() => null)]);
    if (!ready || ready.done || ready.value !== 'ready') {
      child.kill();
      throw new Error('batch load process did not start');
    }
    return load;
  }

  async round(round: object): Promise<{ sent: number; latenciesMs: number[]; warmupLatenciesMs: number[]; errors: Record<string, number>; accepted: { request_id: string; event_ids: number[] }[]; sendLagP99Ms: number }> {
    this.#child.stdin!.write(JSON.stringify(round) + '\n');
    const line = await this.#lines.next();
    if (line.done) throw new Error('batch load process exited before answering');
    return JSON.parse(line.value);
  }

  stop(): void {
    this.#child.stdin!.end();
    this.#child.kill();
  }
}

/** The load plays a worker: it presents the server's worker token. */
const workerAuth = (s: BenchService) => ({ authorization: `Bearer ${s.svc.deps.workerToken}` });

/** Executions of a one-step playbook whose commands the load "worker" holds: the batches report progress on them. */
async function heldCommands(s: BenchService, executions: number): Promise<{ execution_id: number; command_id: number; attempt: number }[]> {
  await s.register(sequentialPlaybook('bench/batch', 1));
  for (let i = 0; i < executions; i++) await s.run('bench/batch');
  const held: { execution_id: number; command_id: number; attempt: number }[] = [];
  while (held.length < executions) {
    const r = await request(s.url, 'POST', '/api/worker/claim', { worker_id: WORKER, max: executions - held.length, wait_ms: 2_000 }, workerAuth(s));
    const commands = (r.body as { commands?: { execution_id: number; command_id: number; attempt: number }[] }).commands ?? [];
    if (r.status !== 200 || !commands.length) throw new Error(`no commands to claim for the batch run: HTTP ${r.status}`);
    held.push(...commands.map((c) => ({ execution_id: c.execution_id, command_id: c.command_id, attempt: c.attempt })));
  }
  return held;
}

/**
 * The search for the highest rate that meets the target, after the first run: upward through
 * `up` while runs meet it (stopping at the first that misses), or, when the first run missed,
 * downward through `down` (stopping at the first that meets it).
 */
export type BatchSearch = { up: number[]; down: number[]; seconds: number };

/**
 * Runs `first`, then the runs `search` asks for, against the service; each is drained and
 * reconciled before the next. The executions and the load process are shared by the runs.
 */
export async function measureBatchIntake(
  s: BenchService,
  databaseUrl: string,
  first: { rate: number; seconds: number; executions: number },
  progress: (msg: string) => void,
  search?: BatchSearch,
): Promise<BatchRunResult[]> {
  const targets = await heldCommands(s, first.executions);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const load = await BatchLoad.start(s.url);
  const results: BatchRunResult[] = [];
  // The next run, from the results so far; undefined when the search is over.
  const next = (done: BatchRunResult[]): { rate: number; seconds: number } | undefined => {
    if (!done.length) return first;
    if (!search) return undefined;
    const last = done[done.length - 1];
    const upward = done[0].meetsTarget;
    if (done.length > 1 && last.meetsTarget !== upward) return undefined;
    const rate = (upward ? search.up : search.down).find((r) => (upward ? r > last.rate : r < last.rate));
    return rate === undefined ? undefined : { rate, seconds: search.seconds };
  };
  try {
    for (let run = next(results); run; run = next(results)) {
      progress(`batch intake: ${run.rate} batches/s of ${BATCH_EVENTS} events on ${first.executions} executions for ${BATCH_WARMUP_SECONDS} s of warm-up, then ${run.seconds} s`);
      const since = (await db.query<{ t: Date }>('SELECT now() AS t')).rows[0].t;
      const out = await load.round({ rate: run.rate, seconds: run.seconds, warmupSeconds: BATCH_WARMUP_SECONDS, eventsPerBatch: BATCH_EVENTS, worker: WORKER, targets, headers: workerAuth(s) });
      const drained = performance.now();
      await drain(db);
      const drainMs = performance.now() - drained;
      const r = await afterRun(db, since, out.accepted);
      const result: BatchRunResult = {
        rate: run.rate,
        seconds: run.seconds,
        eventsPerBatch: BATCH_EVENTS,
        executions: first.executions,
        sent: out.sent,
        accepted: out.accepted.length,
        errors: out.errors,
        ackMs: ackSummary(out.latenciesMs),
        warmupAckMs: ackSummary(out.warmupLatenciesMs),
        sendLagP99Ms: round(out.sendLagP99Ms),
        drainMs: round(drainMs, 0),
        ...r,
        meetsTarget: false,
      };
      const rec = result.reconciliation;
      result.meetsTarget = result.ackMs.p99 <= BATCH_TARGET_P99_MS && !Object.keys(out.errors).length && rec.lost === 0 && rec.duplicated === 0 && rec.misplaced === 0 && rec.unexpected === 0 && rec.failedBatches === 0;
      results.push(result);
      progress(`  p99 ack ${result.ackMs.p99} ms, ${Object.keys(result.errors).length ? `errors ${JSON.stringify(result.errors)}` : 'no errors'}, ${result.eventsRoutedPerSecond} events routed/s${result.meetsTarget ? '' : ' (misses the target)'}`);
    }
  } finally {
    load.stop();
    await db.end();
  }
  return results;
}

/** Waits until no batch is waiting or being processed. */
async function drain(db: pg.Client): Promise<void> {
  const t0 = performance.now();
  let shown = false;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.batch_request WHERE state IN ('accepted', 'processing')`);
    if (rows[0].n === 0) return;
    if (!shown && performance.now() - t0 > DRAIN_STALL_MS) {
      // A drain this slow means batches wait with nothing processing them: show what waits, and
      // how long ago each execution's batches were taken (a held one waits for its lease).
      shown = true;
      const waiting = await db.query(
        `SELECT b.execution_id, b.state, count(*)::int AS batches, min(b.updated_at) AS oldest, max(b.attempts) AS attempts
           FROM core.batch_request b WHERE b.state IN ('accepted', 'processing') GROUP BY 1, 2 ORDER BY 1 LIMIT 10`,
      );
      const activity = await db.query(
        `SELECT application_name, state, wait_event_type, wait_event, round(extract(epoch FROM now() - query_start) * 1000) AS ms, left(query, 100) AS query
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
      );
      console.error(`batch drain slow after ${DRAIN_STALL_MS} ms: ${JSON.stringify(waiting.rows)}\nsessions: ${JSON.stringify(activity.rows)}`);
    }
    if (performance.now() - t0 > DRAIN_TIMEOUT_MS) throw new Error(`batch queue not drained after ${DRAIN_TIMEOUT_MS} ms: ${rows[0].n} left`);
    await sleep(DRAIN_POLL_MS);
  }
}

/**
 * Routing rate, processing figures and the reconciliation of the batches accepted since `since`:
 * a batch's `event_ids` are ids in its execution's log, so an item is known by its execution and
 * id, and is stored once, at that id (`misplaced`: stored under another).
 */
async function afterRun(db: pg.Client, since: Date, accepted: { request_id: string; event_ids: number[] }[]) {
  const executionOf = new Map(
    (await db.query<{ request_id: string; execution_id: string }>(`SELECT request_id::text, execution_id FROM core.batch_request WHERE request_id = ANY($1::uuid[])`, [accepted.map((a) => a.request_id)])).rows.map(
      (r) => [r.request_id, Number(r.execution_id)],
    ),
  );
  const ids = accepted.flatMap((a) => a.event_ids.map((id) => `${executionOf.get(a.request_id)}:${id}`));
  const stored = await db.query<{ execution_id: string; id: string; n: number; at_id: number }>(
    `SELECT execution_id, context->>'batch_event_id' AS id, count(*)::int AS n, count(*) FILTER (WHERE event_id = (context->>'batch_event_id')::bigint)::int AS at_id
       FROM core.event WHERE context ? 'batch_event_id' AND created_at >= $1 GROUP BY 1, 2`,
    [since],
  );
  const seen = new Map(stored.rows.map((r) => [`${r.execution_id}:${r.id}`, r]));
  const acceptedSet = new Set(ids);
  let storedOnce = 0;
  let lost = 0;
  let duplicated = 0;
  let misplaced = 0;
  for (const id of ids) {
    const r = seen.get(id);
    if (!r) lost++;
    else if (r.n === 1) storedOnce++;
    else duplicated++;
    if (r && r.at_id !== r.n) misplaced++;
  }
  const unexpected = [...seen.keys()].filter((id) => !acceptedSet.has(id)).length;
  const span = await db.query<{ routed: number; seconds: number; failed: number }>(
    `SELECT (SELECT count(*)::int FROM core.event WHERE context ? 'batch_event_id' AND created_at >= $1) AS routed,
            extract(epoch FROM max(updated_at) - min(created_at))::float8 AS seconds,
            count(*) FILTER (WHERE state = 'failed')::int AS failed
       FROM core.batch_request WHERE created_at >= $1`,
    [since],
  );
  const timing = await db.query<{ p50: number; p99: number; per_call: number }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY (result->'context'->>'processing_ms')::float8) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY (result->'context'->>'processing_ms')::float8) AS p99,
            avg((context->>'batches_in_call')::float8) AS per_call
       FROM core.event WHERE event_type = $2 AND created_at >= $1`,
    [since, EVENT.batchCompleted],
  );
  const sp = span.rows[0];
  const t = timing.rows[0];
  return {
    eventsRoutedPerSecond: sp.seconds > 0 ? round(sp.routed / sp.seconds, 0) : 0,
    processingMs: { p50: round(Number(t.p50 ?? 0)), p99: round(Number(t.p99 ?? 0)) },
    batchesPerCall: round(Number(t.per_call ?? 0)),
    reconciliation: { acceptedEvents: ids.length, storedOnce, lost, duplicated, misplaced, unexpected, failedBatches: sp.failed },
  };
}

/** The table rows of the batch runs: the first at the target rate, the others the search above it. */
export function batchRows(results: BatchRunResult[]): Row[] {
  const rows: Row[] = [];
  for (const r of results) {
    const rec = r.reconciliation;
    const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
    rows.push({
      figure: `batch intake, ${r.rate}/s x ${r.eventsPerBatch} events, ${r.seconds} s after ${BATCH_WARMUP_SECONDS} s: ack p50 / p99`,
      value: `${fmt(r.ackMs.p50)} / ${fmt(r.ackMs.p99)} ms`,
      baseline: '',
      ratio: '',
      target: `p99 <= ${BATCH_TARGET_P99_MS} ms`,
      verdict: r.meetsTarget ? 'ok' : 'MISSED',
    });
    rows.push({
      figure: `  its ${BATCH_WARMUP_SECONDS} s warm-up: ack p50 / p99`,
      value: `${fmt(r.warmupAckMs.p50)} / ${fmt(r.warmupAckMs.p99)} ms`,
      baseline: '',
      ratio: '',
      target: '',
      verdict: '',
    });
    rows.push({
      figure: `  errors / events routed per s / lost / duplicated / not at their id`,
      value: `${errors} / ${r.eventsRoutedPerSecond} / ${rec.lost} / ${rec.duplicated} / ${rec.misplaced}`,
      baseline: '',
      ratio: '',
      target: '0 / - / 0 / 0 / 0',
      verdict: errors || rec.lost || rec.duplicated || rec.misplaced || rec.unexpected || rec.failedBatches ? 'MISSED' : 'ok',
    });
  }
  const best = results.filter((r) => r.meetsTarget).sort((a, b) => b.rate - a.rate)[0];
  if (results.length > 1) {
    rows.push({ figure: 'batch intake: highest rate meeting p99 <= 15 ms, no errors', value: best ? `${best.rate} batches/s` : 'none', baseline: '', ratio: '', target: `>= ${BATCH_TARGET_RATE}/s`, verdict: best && best.rate >= BATCH_TARGET_RATE ? 'ok' : 'MISSED' });
  }
  return rows;
}
