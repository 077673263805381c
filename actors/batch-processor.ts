import type { Job, JobResult } from 'pg-boss';
import * as v from 'valibot';
import {
  BATCH_MOVED_SQLSTATE,
  batchQueueDepth,
  claimBatches,
  deleteFinishedBatches,
  endBatches,
  markRouted,
  staleBatchExecutions,
  type BatchEnd,
  type ClaimedBatch,
  type RecordAppend,
} from '../src/db/batch.repo.ts';
import { isDatabaseUnavailable } from '../src/db/classify-database-error.ts';
import type { PgBoss } from '../src/jobs/boss.ts';
import type { BatchFailureCode } from '../machines/batch-request.machine.ts';
import { batchItemEvent } from './batch-item.ts';
import { BATCH_QUEUE, batchJobData, ensureBatchQueue, sendBatchJobs } from './batch-queue.ts';
import type { EngineDeps } from './engine-deps.ts';
import { routeEvents } from './route-events.ts';
import type { EventResult, RoutedEvent } from '../src/protocol.ts';
import { newRouteProbe, type RouteProbe } from './route-probe.ts';

export type BatchDeps = EngineDeps & { boss: PgBoss };

// Jobs (so executions) one handling call takes; a call routes all their batches in one
// transaction, which holds their executions' rows (accepts for them wait): kept small.
const JOBS_PER_CALL = 4;
// Events of one execution one call routes at most (its first batch always); the rest get a new job.
const EVENTS_PER_EXECUTION_PER_CALL = 512;
// Idle processors look for jobs this often; NOTIFY wakes them at once when a job is sent, but a
// job whose execution pg-boss's statistics still list as active is skipped until the next look
// (src/jobs/boss.ts): kept short so that such a job waits a second or two, not more.
const POLL_INTERVAL_SECONDS = 1;
// The sweep: sends a job for batches left unfinished this long past the processing timeout (their
// job failed for good, or was lost), and drops finished requests past their retention.
const SWEEP_INTERVAL_MS = 10_000;
const STALE_AFTER_TIMEOUT_SECONDS = 10;
const SWEEP_MAX_EXECUTIONS = 500;
/** Finished batch requests (and so their idempotency keys) are kept this long. */
export const BATCH_RETENTION_SECONDS = 48 * 3600;
const CLEANUP_MAX_ROWS = 5_000;

/** A handling call of several executions failed; each is processed on its own to find which. */
class SplitUp extends Error {}
/** Processing ran past SVC_BATCH_PROCESSING_TIMEOUT_SECONDS before its commit. */
class ProcessingTimeout extends Error {}

/**
 * Starts the SVC_BATCH_ACCEPT_WORKERS batch processors on the pg-boss queue (and the sweep);
 * returns a function that stops them, letting handling calls in flight finish.
 */
export async function startBatchProcessor(deps: BatchDeps): Promise<() => Promise<void>> {
  const { boss, config } = deps;
  await ensureBatchQueue(boss, config);
  deps.metrics.readBatchQueueDepth(() => batchQueueDepth(deps.db));
  await boss.work<unknown>(
    BATCH_QUEUE,
    {
      batchSize: JOBS_PER_CALL,
      localConcurrency: config.SVC_BATCH_ACCEPT_WORKERS,
      pollingIntervalSeconds: POLL_INTERVAL_SECONDS,
      notifyPollingIntervalSeconds: POLL_INTERVAL_SECONDS,
      burstWhenBatchFull: true,
      perJobResults: true,
    },
    (jobs) => handleJobs(deps, jobs),
  );
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const sweep = async () => {
    try {
      await sweepBatches(deps);
    } catch (err) {
      deps.log.warn({ err: errorText(err) }, 'batch sweep failed');
    }
    if (!stopped) timer = setTimeout(sweep, SWEEP_INTERVAL_MS).unref();
  };
  timer = setTimeout(sweep, SWEEP_INTERVAL_MS).unref();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await boss.offWork(BATCH_QUEUE, { wait: true });
  };
}

/** One handling call: every job is settled on its own; a database away fails them for a retry. */
async function handleJobs(deps: BatchDeps, jobs: Job<unknown>[]): Promise<JobResult[]> {
  const executionOf = new Map<string, number>();
  for (const job of jobs) {
    const data = v.safeParse(batchJobData, job.data);
    if (data.success) executionOf.set(job.id, data.output.execution_id);
  }
  const retry = await processExecutions(deps, [...new Set(executionOf.values())]);
  return jobs.map((job) => {
    const id = executionOf.get(job.id);
    if (id === undefined) return { id: job.id, status: 'deadletter', output: { message: 'job data is not {execution_id}' } };
    return retry.has(id) ? { id: job.id, status: 'failed', output: { message: 'the database is unavailable' } } : { id: job.id, status: 'completed' };
  });
}

/** Processes the waiting batches of these executions; returns those to retry later (database away). */
async function processExecutions(deps: BatchDeps, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  try {
    await handlingCall(deps, ids);
    return new Set();
  } catch (err) {
    if (isDatabaseUnavailable(err)) {
      deps.log.warn({ err: errorText(err), executions: ids }, 'batch processing: database unavailable; the job is retried');
      return new Set(ids);
    }
    if (!(err instanceof SplitUp)) {
      deps.log.error({ err: errorText(err), executions: ids }, 'batch processing failed');
      return new Set(ids);
    }
    const retry = new Set<number>();
    for (const id of ids) for (const r of await processExecutions(deps, [id])) retry.add(r);
    return retry;
  }
}

/**
 * Takes the executions' waiting batches, routes their events in one routing transaction (the
 * same code as worker reports: per-execution locks, fencing, one write) that also marks them
 * routed, then ends each with `batch.completed` (or `batch.failed` when routing timed out or
 * failed) and its measurements. Batches an earlier call routed only get their record.
 */
async function handlingCall(deps: BatchDeps, ids: number[]): Promise<void> {
  const t0 = performance.now();
  const timeoutMs = deps.config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS * 1000;
  const { batches, more } = await claimBatches(deps.db, ids, EVENTS_PER_EXECUTION_PER_CALL);
  const toRoute = batches.filter((b) => !b.routed);
  const probe = newRouteProbe();
  let results: EventResult[] = [];
  if (toRoute.length) {
    try {
      const events: RoutedEvent[] = toRoute.flatMap((b) => b.events.map((item, i) => batchItemEvent(b, item, b.event_ids[i])));
      const out = await routeEvents(deps, events, {
        timeoutMs: Math.max(1, timeoutMs - (performance.now() - t0)),
        probe,
        beforeCommit: async (q) => {
          if (performance.now() - t0 > timeoutMs) throw new ProcessingTimeout();
          await markRouted(q, toRoute.map((b) => b.batch_id));
        },
      });
      results = out.results;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === BATCH_MOVED_SQLSTATE) return; // another processor took them over; it ends them
      if (isDatabaseUnavailable(err)) throw err;
      if (ids.length > 1) throw new SplitUp();
      const failure: BatchFailureCode = err instanceof ProcessingTimeout || code === '57014' ? 'processing_timeout' : 'processing_error';
      await failBatches(deps, toRoute, failure, err, performance.now() - t0);
      await completeBatches(deps, batches.filter((b) => b.routed), [], newRouteProbe(), t0);
      await continueWith(deps, more);
      return;
    }
  }
  await completeBatches(deps, batches, results, probe, t0, toRoute);
  await continueWith(deps, more);
}

/** Ends the routed batches with `batch.completed`; `routedNow` are those whose events are `results`, in order. */
async function completeBatches(deps: BatchDeps, batches: ClaimedBatch[], results: EventResult[], probe: RouteProbe, t0: number, routedNow: ClaimedBatch[] = []): Promise<void> {
  if (!batches.length) return;
  const offsets = new Map<number, number>();
  let at = 0;
  for (const b of routedNow) {
    offsets.set(b.batch_id, at);
    at += b.events.length;
  }
  const processingMs = performance.now() - t0;
  const ends: BatchEnd[] = batches.map((b) => {
    const from = offsets.get(b.batch_id);
    const n = b.event_ids.length;
    const mine = from === undefined ? [] : results.slice(from, from + n);
    const commands = from === undefined ? 0 : sum(probe.commands_by_event.slice(from, from + n));
    const actionable = from !== undefined && probe.actionable_by_event.slice(from, from + n).some(Boolean);
    const refused = mine.flatMap((r, i) => (r.event_id === null ? [{ batch_event_id: b.event_ids[i], error: r.error, detail: r.detail }] : []));
    const routed = mine.filter((r) => r.event_id !== null).map((r) => r.event_id as number);
    const timings = { processing_ms: roundMs(processingMs), ...measured(probe), actionable_event: actionable, commands_generated: commands };
    const refusedText = refused.length ? `, ${refused.length} refused (${[...new Set(refused.map((r) => r.error))].join(', ')})` : '';
    return {
      batch_id: b.batch_id,
      execution_id: b.execution_id,
      worker_id: b.worker_id,
      state: 'completed',
      event_type: 'batch.completed',
      context: {
        request_id: b.request_id,
        events: n,
        routed: routed.length,
        first_event_id: routed.length ? Math.min(...routed) : null,
        last_event_id: routed.length ? Math.max(...routed) : null,
        refused,
        batches_in_call: batches.length,
        // Routed by an earlier call whose processor stopped before this record: its measurements are lost.
        ...(from === undefined ? { recovered: true } : {}),
      },
      result: { context: timings },
      error: null,
      commands_generated: commands,
      message: from === undefined ? `${n} events routed (by an earlier attempt)` : `${routed.length} events routed${refusedText}; ${commands} commands issued`,
    };
  });
  advance(deps, await endBatches(deps.db, 'complete', ends));
  for (const b of routedNow) {
    const from = offsets.get(b.batch_id)!;
    const issued = probe.issued.filter((c) => c.event >= from && c.event < from + b.events.length);
    deps.metrics.batchFirstClaims.issued(b.request_id, issued);
  }
}

async function failBatches(deps: BatchDeps, batches: ClaimedBatch[], code: BatchFailureCode, err: unknown, processingMs: number): Promise<void> {
  const timeoutS = deps.config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS;
  const message =
    code === 'processing_timeout'
      ? `processing did not finish within ${timeoutS} s (SVC_BATCH_PROCESSING_TIMEOUT_SECONDS); no event of the batch was routed`
      : 'processing failed (the server log has the details); no event of the batch was routed';
  if (code === 'processing_error') deps.log.error({ err: errorText(err), batches: batches.map((b) => b.request_id) }, 'batch processing failed');
  const ends: BatchEnd[] = batches.map((b) => ({
    batch_id: b.batch_id,
    execution_id: b.execution_id,
    worker_id: b.worker_id,
    state: 'failed',
    event_type: 'batch.failed',
    context: { request_id: b.request_id, events: b.event_ids.length, routed: 0 },
    result: { context: { processing_ms: roundMs(processingMs) } },
    error: { code, message },
    commands_generated: 0,
    message,
  }));
  advance(deps, await endBatches(deps.db, 'fail', ends));
}

/** Executions whose batches did not all fit in the call get a job for the rest. */
async function continueWith(deps: BatchDeps, executionIds: number[]): Promise<void> {
  if (executionIds.length) await sendBatchJobs(deps.boss, executionIds);
}

/** The records appended fold to nothing: snapshots held in memory stay current. */
function advance(deps: BatchDeps, appends: RecordAppend[]): void {
  for (const a of appends) if (a.applied) deps.snapshots.advance(a.execution_id, a.from_event_id, a.to_event_id);
}

/** Milliseconds rounded to the microsecond. */
const roundMs = (x: number) => Math.round(x * 1000) / 1000;

/** The spec's timing fields of a probe. */
function measured(p: RouteProbe) {
  const ms = roundMs;
  return {
    pool_checkout_ms: ms(p.pool_checkout_ms),
    lock_acquire_ms: ms(p.lock_acquire_ms),
    state_load_ms: ms(p.state_load_ms),
    engine_total_ms: ms(p.engine_total_ms),
    save_state_ms: ms(p.save_state_ms),
    save_state_calls: p.save_state_calls,
    save_state_terminal_lightweight_ms: ms(p.save_state_terminal_lightweight_ms),
    save_state_terminal_lightweight_calls: p.save_state_terminal_lightweight_calls,
    persist_event_compat_ms: ms(p.persist_event_compat_ms),
    persist_event_compat_calls: p.persist_event_compat_calls,
    save_state_coalesced_count: p.save_state_coalesced_count,
    commit_ms: ms(p.commit_ms),
    transaction_ms: ms(p.transaction_ms),
    issue_commands_ms: ms(p.issue_commands_ms),
  };
}

/** Sends a job for executions whose batches were left waiting, and drops finished requests past retention. */
export async function sweepBatches(deps: BatchDeps): Promise<void> {
  const staleSeconds = deps.config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS + STALE_AFTER_TIMEOUT_SECONDS;
  const stale = await staleBatchExecutions(deps.db, staleSeconds, SWEEP_MAX_EXECUTIONS);
  if (stale.length) {
    deps.log.info({ executions: stale.length }, 'batch sweep: sending jobs for batches left waiting');
    await sendBatchJobs(deps.boss, stale);
  }
  await deleteFinishedBatches(deps.db, BATCH_RETENTION_SECONDS, CLEANUP_MAX_ROWS);
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
