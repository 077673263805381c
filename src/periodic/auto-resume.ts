import { setTimeout as delay } from 'node:timers/promises';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { startExecutions, type StartInput, type StartKey } from '../../actors/start-execution.ts';
import { EVENT } from '../../machines/event-types.ts';
import { isLiveExecutionStatus } from '../../machines/statuses.ts';
import { getExecution, interruptedRoots, successorlessResumes, treeClaims, type InterruptedRoot } from '../db/execution.repo.ts';
import { isIdempotencyKeyTaken } from '../db/idempotency.repo.ts';
import { startAsked } from '../engine/start-asked.ts';
import { carriedToSuccessor } from '../engine/retry-execution.ts';
import { countLiveWorkerPools } from '../db/runtime.repo.ts';
import { ServiceError } from '../errors.ts';
import { databaseNow } from '../waits/wait-clock.ts';
import { withLease } from './with-lease.ts';

/** Run once per start (src/periodic/start-periodic.ts); also the name of its lease. */
export const AUTO_RESUME = 'auto_resume';
/** How long auto-resume waits for the database and a worker pool's heartbeat before it goes on without. */
const AUTO_RESUME_WAIT_MS = 60_000;
const WAIT_POLL_MS = 500;
// Renewed while a run works, however long its backlog: a server that dies holding it (SIGKILLed
// mid-run, in a crash loop) blocks the next one's run this long at most. It was 600 s unrenewed,
// and the next server gave up at once: past RESUME_WINDOW_MINUTES (5) by then, what the dead
// run had not handled (or a successor it had not started) was never resumed.
const LEASE_TTL_SECONDS = 30;
const LEASE_RENEW_MS = 10_000;
/** How often a server waits to look again while another server's run holds the lease. */
const LEASE_WAIT_MS = 1_000;
const PAGE = 100;

export type Resumed = { execution_id: number; action: 'cancelled' | 'restarted' | 'skipped'; resumed_as?: number; error?: string };

/**
 * Run once when a server starts: executions interrupted by the stop (see interruptedRoots: no
 * terminal event, nothing new for SVC_AUTO_RESUME_MIN_STALE_SECONDS, last event within
 * RESUME_WINDOW_MINUTES, nothing waited for on purpose, a PENDING command (a backlog) included,
 * no command held by a live worker) are cancelled with reason
 * `auto_resume` (SVC_AUTO_RESUME_MODE=cancel) or cancelled and started again from the same
 * catalog entry and workload (`restart`, `resumed_from` in the new `execution.started`), unless a
 * worker claimed a command of the tree after the read (resumeOne). First waits until the database answers and a
 * worker pool has beaten since the call (both within AUTO_RESUME_WAIT_MS), and until
 * SVC_COMMAND_REAPER_WORKER_STALE_SECONDS have passed, so every pool still alive has been heard
 * from. One server at a time (a lease, renewed while a run works; a server that finds it held
 * waits for it, then looks); an execution tree is handled at its root.
 */
export async function autoResume(deps: EngineDeps, opts: { signal?: AbortSignal } = {}): Promise<Resumed[]> {
  const c = deps.config;
  const t0 = performance.now();
  const deadline = t0 + AUTO_RESUME_WAIT_MS;
  const pause = async () => {
    await delay(WAIT_POLL_MS, undefined, { signal: opts.signal });
    return performance.now() < deadline;
  };
  while ((await deps.db.ping()) !== 'ok') {
    if (!(await pause())) {
      deps.log.warn('auto-resume: the database does not answer; nothing resumed');
      return [];
    }
  }
  for (;;) {
    const sinceSeconds = (performance.now() - t0) / 1000 + 1;
    if ((await countLiveWorkerPools(deps.db, c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS, sinceSeconds)) > 0) break;
    if (!(await pause())) {
      deps.log.warn({ waited_ms: Math.round(performance.now() - t0) }, 'auto-resume: no worker pool heartbeat yet; going on without');
      break;
    }
  }
  // Pools could not beat while no server answered: one that is alive beats within the stale
  // threshold of this start, one that died with the stop does not. Only then is "a live worker
  // runs it" known for every command.
  const staleMs = c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS * 1000;
  if (performance.now() - t0 < staleMs) await delay(staleMs - (performance.now() - t0), undefined, { signal: opts.signal });
  // The lease is taken after the wait, not by the runner before it: what it elects is the server
  // that looks once every live pool has been heard from.
  // Held by another server's run: wait for it, then look (a live run has handled what it found,
  // so this one finds what is left; a dead one's lease expires, and this one does its work).
  const terms = { name: AUTO_RESUME, ttlSeconds: LEASE_TTL_SECONDS, minGapSeconds: null, renewEveryMs: LEASE_RENEW_MS };
  let done = await withLease(deps, terms, () => resumeAll(deps, opts.signal));
  if (!done.ran) deps.log.info('auto-resume: another server is doing it; this one looks once its lease is given back or expires');
  while (!done.ran) {
    await delay(LEASE_WAIT_MS, undefined, { signal: opts.signal });
    done = await withLease(deps, terms, () => resumeAll(deps, opts.signal));
  }
  const out = done.value;
  if (out.length) deps.log.info({ mode: c.SVC_AUTO_RESUME_MODE, executions: out }, 'auto-resume handled executions interrupted by the stop');
  return out;
}

/** Every interrupted root, page by page (see autoResume), after the successors a dead server never started; the caller holds the lease. */
async function resumeAll(deps: EngineDeps, signal: AbortSignal | undefined): Promise<Resumed[]> {
  const c = deps.config;
  const out: Resumed[] = [];
  for (const root of await successorlessResumes(deps.db, c.RESUME_WINDOW_MINUTES)) {
    signal?.throwIfAborted();
    out.push(await startSuccessor(deps, root));
  }
  for (let after = 0; ; ) {
    const page = await interruptedRoots(deps.db, {
      minStaleSeconds: c.SVC_AUTO_RESUME_MIN_STALE_SECONDS,
      windowMinutes: c.RESUME_WINDOW_MINUTES,
      workerStaleSeconds: c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS,
      afterId: after,
      limit: PAGE,
    });
    for (const root of page) {
      signal?.throwIfAborted();
      out.push(await resumeOne(deps, root));
    }
    if (page.length < PAGE) return out;
    after = page.at(-1)!.execution_id;
  }
}

/** Thrown inside the cancel's transaction when the tree's claims moved on since they were read: nothing is written. */
class ClaimedMeanwhile extends Error {}

/**
 * Cancels one interrupted root, then (restart mode) starts its successor. The cancel is written
 * only if the tree's claims are still what interruptedRoots read (checked in the cancel's
 * transaction, after its write: a claim committed before is seen; one after waits for the row
 * the cancel moved, or skips it, and finds it cancelled). So a command a live worker took
 * meanwhile (a stranded one the reaper republished, say) runs once, in this execution, which is
 * left alone. The successor starts after the cancel: started first, it would run the step again
 * whenever the cancel is refused. What can fail is prepared before the cancel.
 */
async function resumeOne(deps: EngineDeps, root: InterruptedRoot): Promise<Resumed> {
  const id = root.execution_id;
  try {
    const restart = deps.config.SVC_AUTO_RESUME_MODE === 'restart';
    const successor = restart ? await successorOf(deps, root) : undefined;
    const row = await getExecution(deps.db, id);
    if (!row || !isLiveExecutionStatus(row.status)) return { execution_id: id, action: 'skipped', error: `execution was ${row?.status ?? 'gone'}` };
    try {
      // `successor`: one is due, so that a server that dies before it starts it leaves a cancel the next run finds (successorlessResumes).
      const context = { reason: 'auto_resume', cancelled_at: new Date(databaseNow(deps)).toISOString(), ...(successor ? { successor: true } : {}) };
      await routeEvents(deps, [{ execution_id: id, event_type: EVENT.executionCancelled, context }], {
        beforeCommit: async (q) => {
          if ((await treeClaims(q, id)) !== root.claims) throw new ClaimedMeanwhile();
        },
      });
    } catch (err) {
      if (!(err instanceof ClaimedMeanwhile)) throw err;
      return { execution_id: id, action: 'skipped', error: 'a worker claimed a command of it (or a step moved on) meanwhile' };
    }
    const after = await getExecution(deps.db, id);
    if (after?.status !== 'cancelled') {
      // It finished meanwhile (a report routed by another server): no successor.
      return { execution_id: id, action: 'skipped', error: `execution was ${after?.status ?? 'gone'}` };
    }
    if (!successor) return { execution_id: id, action: 'cancelled' };
    const [result] = await startExecutions(deps, [successor]);
    if (result instanceof ServiceError) throw result;
    return { execution_id: id, action: 'restarted', resumed_as: result.executionId };
  } catch (err) {
    deps.log.warn({ err: String(err), execution_id: id }, 'auto-resume could not handle an execution');
    return { execution_id: id, action: 'skipped', error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Starts the successor of a root auto-resume cancelled while a server that died before it started
 * one held the lease. Its key makes the start exactly once: a successor started meanwhile (by a
 * server whose lease ran out while it worked) has taken it, and this one starts nothing.
 */
async function startSuccessor(deps: EngineDeps, root: Root): Promise<Resumed> {
  const id = root.execution_id;
  try {
    const [result] = await startExecutions(deps, [await successorOf(deps, root)]);
    if (result instanceof ServiceError) throw result;
    deps.log.info({ execution_id: id, resumed_as: result.executionId }, 'auto-resume started the successor a stopped server had not');
    return { execution_id: id, action: 'restarted', resumed_as: result.executionId };
  } catch (err) {
    if (isIdempotencyKeyTaken(err)) return { execution_id: id, action: 'skipped', error: 'its successor had started meanwhile' };
    deps.log.warn({ err: String(err), execution_id: id }, 'auto-resume could not start the successor of an execution it cancelled');
    return { execution_id: id, action: 'skipped', error: err instanceof Error ? err.message : String(err) };
  }
}

type Root = Pick<InterruptedRoot, 'execution_id' | 'catalog_id'>;

/** The idempotency scope of successors' starts: no API request's (those begin with a method). */
const SUCCESSOR_KEY_SCOPE = 'auto_resume successor';

/**
 * The start of a root's successor: the same catalog entry, workload, labels and priority (what its
 * start asked for), `resumed_from` the root; keyed by the root, so it starts once. It replays
 * (ExecutionInput.replay, `step.replayed`) every run of a step the root completed, as a retry from
 * the step the stop cut short does: before, it began at the first step and ran the completed ones
 * again, their calls and side effects too. A retry's successor also takes the outcomes the retry
 * was started with that the root had not reached yet (an approval given, not asked for again), and
 * keeps the signals the root kept for steps that had not taken them.
 */
async function successorOf(deps: EngineDeps, root: Root): Promise<StartInput> {
  const [asked, carried] = await Promise.all([startAsked(deps.db, root.execution_id), carriedToSuccessor(deps, root.execution_id)]);
  const compiled = await deps.cache.get(deps.db, root.catalog_id);
  const key: StartKey = { scope: SUCCESSOR_KEY_SCOPE, key: String(root.execution_id), requestHash: '', statusCode: 201, answer: (s) => ({ execution_id: s.executionId }) };
  return {
    compiled,
    payload: asked.payload,
    origin: { resumed_from: root.execution_id, ...(asked.labels ? { labels: asked.labels } : {}) },
    ...carried,
    ...(asked.priority === undefined ? {} : { priority: asked.priority }),
    ownHandles: true,
    successor: true,
    idempotency: key,
  };
}

