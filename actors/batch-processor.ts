import { EVENT } from '../machines/event-types.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { batchQueueDepth, claimBatches, endBatches, itemRecords, type BatchEnd, type ClaimedBatch, type RecordAppend } from '../src/db/batch.repo.ts';
import { isDatabaseUnavailable } from '../src/db/classify-database-error.ts';
import { ServiceError } from '../src/errors.ts';
import type { BatchFailureCode } from '../machines/batch-request.machine.ts';
import type { BatchWake } from './batch-wake.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { RoutedItem } from './fold.ts';
import { routeEvents } from './route-events.ts';
import type { ReportRefusalCode } from '../machines/error-codes.ts';
import { newRouteProbe, type RouteProbe } from './route-probe.ts';

export type BatchDeps = EngineDeps & { batchWake: BatchWake };

// Executions one handling call takes; a call routes all their batches in one transaction, which
// holds their executions' rows (accepts for them wait): kept small.
const EXECUTIONS_PER_CALL = 4;
// Events of one execution one call routes at most (its first batch always); the rest are the
// execution's next head, taken by the next call.
const EVENTS_PER_EXECUTION_PER_CALL = 512;
// An idle processor looks for batches this often: the accepting server wakes its own at once,
// other servers' processors find a batch at their next look.
const DEFAULT_POLL_INTERVAL_MS = 1_000;
// A processor holds an execution's batches this long past the processing timeout; then another
// may take them (one that died, or lost the database, releases nothing).
const LEASE_MARGIN_SECONDS = 5;
// Processing that failed (the database away) is tried again by the same processor after a delay
// doubling from the first to the last; past RETRY_LIMIT tries its batches wait for the lease.
const RETRY_DELAY_FIRST_MS = 1_000;
const RETRY_DELAY_MAX_MS = 30_000;
const RETRY_LIMIT = 25;

/** A handling call of several executions failed; each is processed on its own to find which. */
class SplitUp extends Error {}

/**
 * Failures after which the same processing may succeed, with nothing written meanwhile: the
 * database away, or an execution's log moved on by other writers at every attempt (batches
 * accepted for it back to back, say). Its batches were accepted (202): tried again, never failed.
 */
const triedAgain = (err: unknown): boolean => isDatabaseUnavailable(err) || (err instanceof ServiceError && err.code === 'write_contended');
/** Processing ran past SVC_BATCH_PROCESSING_TIMEOUT_SECONDS before its commit. */
class ProcessingTimeout extends Error {}

/**
 * Starts the SVC_BATCH_ACCEPT_WORKERS batch processors: each claims executions' batches
 * (claimBatches), processes them, and looks again at once when it found some, else when woken
 * (`deps.batchWake`) or after `pollIntervalMs` (1 s). Returns a function that stops them, letting
 * handling calls in flight finish.
 */
export async function startBatchProcessor(deps: BatchDeps, opts: { pollIntervalMs?: number } = {}): Promise<() => Promise<void>> {
  deps.metrics.readBatchQueueDepth(() => batchQueueDepth(deps.db));
  const stop = new AbortController();
  const pollMs = opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const processors = Array.from({ length: deps.config.SVC_BATCH_ACCEPT_WORKERS }, () => runProcessor(deps, pollMs, stop.signal));
  return async () => {
    stop.abort();
    await Promise.all(processors);
  };
}

/** The seconds a processor holds what it claimed before another may take it. */
function batchLeaseSeconds(config: BatchDeps['config']): number {
  return Math.ceil(config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS) + LEASE_MARGIN_SECONDS;
}

/** One processor, until `signal` aborts; never throws. */
async function runProcessor(deps: BatchDeps, pollMs: number, signal: AbortSignal): Promise<void> {
  const leaseSeconds = batchLeaseSeconds(deps.config);
  // Executions this processor holds whose processing failed: tried again before anything new.
  let held: number[] = [];
  let failures = 0;
  while (!signal.aborted) {
    const seen = deps.batchWake.generation;
    let ids = held;
    let claimed: ClaimedBatch[] | undefined;
    if (!ids.length) {
      try {
        claimed = await claimBatches(deps.db, { next: EXECUTIONS_PER_CALL, leaseSeconds }, EVENTS_PER_EXECUTION_PER_CALL);
      } catch (err) {
        if (!deps.db.closed) deps.log.warn({ err: errorText(err) }, 'batch claim failed; trying again');
        failures++;
        // A batch accepted meanwhile was committed: the database is back, so the back-off (up to
        // 30 s after a long outage) ends there instead of leaving that batch to wait it out.
        await deps.batchWake.wait(seen, retryDelayMs(failures), signal);
        continue;
      }
      ids = [...new Set(claimed.map((b) => b.execution_id))];
      if (!ids.length) {
        failures = 0;
        await deps.batchWake.wait(seen, pollMs, signal);
        continue;
      }
    }
    held = [...(await processExecutions(deps, ids, claimed))];
    if (!held.length) {
      failures = 0;
      continue;
    }
    failures++;
    if (failures > RETRY_LIMIT) {
      deps.log.error({ executions: held }, 'batch processing keeps failing; its batches wait for the lease to run out');
      held = [];
      failures = 0;
    }
    await pause(retryDelayMs(failures), signal);
  }
}

const retryDelayMs = (failures: number) => Math.min(RETRY_DELAY_MAX_MS, RETRY_DELAY_FIRST_MS * 2 ** Math.max(0, failures - 1));
const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal, ref: false }).catch(() => {});

/**
 * Processes the executions' batches (`claimed`, or claimed again by id); returns the executions
 * to try again (the database away, or a failure that is not the batches').
 */
async function processExecutions(deps: BatchDeps, ids: number[], claimed?: ClaimedBatch[]): Promise<Set<number>> {
  try {
    await handlingCall(deps, ids, claimed);
    return new Set();
  } catch (err) {
    if (triedAgain(err)) {
      deps.log.warn({ err: errorText(err), executions: ids }, 'batch processing: database unavailable or contended; tried again');
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
 * Has the executions' claimed batches routed (`claimed`, or claimed again by id): their items wait
 * at ids reserved in the logs, and any routing of an execution writes them there first
 * (actors/fold.ts), so this is a wake-up of the executions, in a transaction (the same code as
 * worker reports: fencing, one write, whose command rows name the batch that issued them).
 * Then each batch ends with `batch.completed` (or `batch.failed` when routing timed out or failed)
 * and its measurements. Batches another routing wrote (a report, a wake-up, an earlier call) only
 * get their record.
 */
async function handlingCall(deps: BatchDeps, ids: number[], claimed?: ClaimedBatch[]): Promise<void> {
  const t0 = performance.now();
  const timeoutMs = deps.config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS * 1000;
  const batches = claimed ?? (await claimBatches(deps.db, { executions: ids }, EVENTS_PER_EXECUTION_PER_CALL));
  const toRoute = batches.filter((b) => !b.routed);
  const probe = newRouteProbe();
  let items: readonly RoutedItem[] = [];
  if (toRoute.length) {
    try {
      const out = await routeEvents(deps, [], {
        wake: [...new Set(toRoute.map((b) => b.execution_id))],
        timeoutMs: Math.max(1, timeoutMs - (performance.now() - t0)),
        probe,
        beforeCommit: async () => {
          if (performance.now() - t0 > timeoutMs) throw new ProcessingTimeout();
        },
      });
      items = out.items;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (triedAgain(err)) throw err;
      if (ids.length > 1) throw new SplitUp();
      const failure: BatchFailureCode = err instanceof ProcessingTimeout || code === '57014' ? 'processing_timeout' : 'processing_error';
      await failBatches(deps, toRoute, failure, err, performance.now() - t0);
      await completeBatches(deps, batches.filter((b) => b.routed), [], newRouteProbe(), t0);
      return;
    }
  }
  await completeBatches(deps, batches, items, probe, t0);
}

/** What became of a batch's items: refused ones (why), the ids of the routed ones, the commands they issued. */
type Outcome = { refused: { batch_event_id: number; error: ReportRefusalCode | string; detail: string }[]; routed: number[]; commands: number; actionable: boolean; byThisCall: boolean };

/**
 * Ends the routed batches with `batch.completed`: from the items this call routed (`items`), or,
 * for batches another routing wrote, from their records in the log.
 */
async function completeBatches(deps: BatchDeps, batches: ClaimedBatch[], items: readonly RoutedItem[], probe: RouteProbe, t0: number): Promise<void> {
  if (!batches.length) return;
  const outcomes = new Map<number, Outcome>();
  for (const i of items) {
    const o = outcomes.get(i.batchId) ?? { refused: [], routed: [], commands: 0, actionable: false, byThisCall: true };
    if (i.result.event_id === null) o.refused.push({ batch_event_id: i.eventId, error: i.result.error, detail: i.result.detail });
    else o.routed.push(i.eventId);
    o.commands += i.issued.length;
    o.actionable ||= i.running && i.accepted;
    outcomes.set(i.batchId, o);
  }
  const elsewhere = batches.filter((b) => !outcomes.has(b.batch_id));
  for (const r of await itemRecords(deps.db, elsewhere)) {
    const o = outcomes.get(r.batch_id) ?? { refused: [], routed: [], commands: 0, actionable: false, byThisCall: false };
    if (r.refused) o.refused.push({ batch_event_id: r.event_id, ...r.refused });
    else o.routed.push(r.event_id);
    o.commands = r.commands;
    outcomes.set(r.batch_id, o);
  }
  const processingMs = performance.now() - t0;
  const ends: BatchEnd[] = batches.map((b) => {
    const o = outcomes.get(b.batch_id) ?? { refused: [], routed: [], commands: 0, actionable: false, byThisCall: false };
    const n = b.event_ids.length;
    const routed = o.routed;
    const timings = { processing_ms: roundMs(processingMs), ...measured(probe), actionable_event: o.actionable, commands_generated: o.commands };
    const refusedText = o.refused.length ? `, ${o.refused.length} refused (${[...new Set(o.refused.map((r) => r.error))].join(', ')})` : '';
    return {
      batch_id: b.batch_id,
      execution_id: b.execution_id,
      worker_id: b.worker_id,
      state: 'completed',
      event_type: EVENT.batchCompleted,
      context: {
        request_id: b.request_id,
        events: n,
        routed: routed.length,
        first_event_id: routed.length ? Math.min(...routed) : null,
        last_event_id: routed.length ? Math.max(...routed) : null,
        refused: o.refused,
        batches_in_call: batches.length,
        // Written by another routing (a report or wake-up of the execution, this processor's for an
        // earlier batch, or an earlier call whose processor stopped before this record): its
        // measurements are not this call's.
        ...(o.byThisCall ? {} : { recovered: true }),
      },
      result: { context: timings },
      error: null,
      commands_generated: o.commands,
      message: o.byThisCall ? `${routed.length} events routed${refusedText}; ${o.commands} commands issued` : `${routed.length} events routed (by another routing of the execution)${refusedText}`,
    };
  });
  advance(deps, await endBatches(deps.db, 'complete', ends));
}

async function failBatches(deps: BatchDeps, batches: ClaimedBatch[], code: BatchFailureCode, err: unknown, processingMs: number): Promise<void> {
  const timeoutS = deps.config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS;
  const message =
    code === 'processing_timeout'
      ? `processing did not finish within ${timeoutS} s (SVC_BATCH_PROCESSING_TIMEOUT_SECONDS); no event of the batch was routed (the log records each as refused)`
      : 'processing failed (the server log has the details); no event of the batch was routed (the log records each as refused)';
  if (code === 'processing_error') deps.log.error({ err: errorText(err), batches: batches.map((b) => b.request_id) }, 'batch processing failed');
  const ends: BatchEnd[] = batches.map((b) => ({
    batch_id: b.batch_id,
    execution_id: b.execution_id,
    worker_id: b.worker_id,
    state: 'failed',
    event_type: EVENT.batchFailed,
    context: { request_id: b.request_id, events: b.event_ids.length, routed: 0 },
    result: { context: { processing_ms: roundMs(processingMs) } },
    error: { code, message },
    commands_generated: 0,
    message,
  }));
  advance(deps, await endBatches(deps.db, 'fail', ends));
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

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
