import { setTimeout as delay } from 'node:timers/promises';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import { startExecutions } from '../../actors/start-execution.ts';
import { interruptedRoots, startEvent } from '../db/execution.repo.ts';
import { countLiveWorkerPools } from '../db/runtime.repo.ts';
import { cancelExecution } from '../engine/cancel-execution.ts';
import { ServiceError } from '../errors.ts';
import { isObject } from '../objects.ts';
import { withLease } from './with-lease.ts';

/** Run once per start (src/periodic/start-periodic.ts); also the name of its lease. */
export const AUTO_RESUME = 'auto_resume';
/** How long auto-resume waits for the database and a worker pool's heartbeat before it goes on without. */
const AUTO_RESUME_WAIT_MS = 60_000;
const WAIT_POLL_MS = 500;
// Long enough for any backlog; a server that dies holding it only delays another server's run.
const LEASE_TTL_SECONDS = 600;
const PAGE = 100;

export type Resumed = { execution_id: number; action: 'cancelled' | 'restarted' | 'skipped'; resumed_as?: number; error?: string };

/**
 * Run once when a server starts: executions interrupted by the stop (see interruptedRoots: no
 * terminal event, nothing new for SVC_AUTO_RESUME_MIN_STALE_SECONDS, last event within
 * RESUME_WINDOW_MINUTES, no command held by a live worker) are cancelled with reason
 * `auto_resume` (SVC_AUTO_RESUME_MODE=cancel) or cancelled and started again from the same
 * catalog entry and workload (`restart`), linked both ways: `resumed_as` in the cancel's context,
 * `resumed_from` in the new `execution.started`. First waits until the database answers and a
 * worker pool has beaten since the call (both within AUTO_RESUME_WAIT_MS), and until
 * SVC_COMMAND_REAPER_WORKER_STALE_SECONDS have passed, so every pool still alive has been heard
 * from. One server at a time (a lease); an execution tree is handled at its root.
 */
export async function autoResume(deps: EngineDeps, opts: { signal?: AbortSignal } = {}): Promise<Resumed[]> {
  const c = deps.config;
  const t0 = performance.now();
  const deadline = t0 + AUTO_RESUME_WAIT_MS;
  const pause = async () => {
    await delay(WAIT_POLL_MS, undefined, { signal: opts.signal });
    return performance.now() < deadline;
  };
  while (!(await deps.db.ping())) {
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
  const done = await withLease(deps, { name: AUTO_RESUME, ttlSeconds: LEASE_TTL_SECONDS, minGapSeconds: null }, () => resumeAll(deps, opts.signal));
  if (!done.ran) {
    deps.log.info('auto-resume: another server is doing it');
    return [];
  }
  const out = done.value;
  if (out.length) deps.log.info({ mode: c.SVC_AUTO_RESUME_MODE, executions: out }, 'auto-resume handled executions interrupted by the stop');
  return out;
}

/** Every interrupted root, page by page (see autoResume); the caller holds the lease. */
async function resumeAll(deps: EngineDeps, signal: AbortSignal | undefined): Promise<Resumed[]> {
  const c = deps.config;
  const out: Resumed[] = [];
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

/** Cancels one interrupted root; in restart mode first starts its successor (no work is lost if we die between). */
async function resumeOne(deps: EngineDeps, root: { execution_id: number; catalog_id: number }): Promise<Resumed> {
  const id = root.execution_id;
  try {
    let resumedAs: number | undefined;
    if (deps.config.SVC_AUTO_RESUME_MODE === 'restart') {
      const started = await startEvent(deps.db, id);
      const input = objectOf(objectOf(started?.context).input);
      const compiled = await deps.cache.get(deps.db, root.catalog_id);
      const [result] = await startExecutions(deps, [{ compiled, payload: objectOf(input.args), origin: { resumed_from: id } }]);
      if (result instanceof ServiceError) throw result;
      resumedAs = result.executionId;
    }
    const cancel = await cancelExecution(deps, id, { reason: 'auto_resume', ...(resumedAs ? { resumed_as: resumedAs } : {}) });
    if (!cancel.cancelled) {
      // It finished meanwhile (a report routed by another server): its successor, if any, runs anyway.
      return { execution_id: id, action: 'skipped', resumed_as: resumedAs, error: `execution was ${cancel.status ?? 'gone'}` };
    }
    return resumedAs ? { execution_id: id, action: 'restarted', resumed_as: resumedAs } : { execution_id: id, action: 'cancelled' };
  } catch (err) {
    deps.log.warn({ err: String(err), execution_id: id }, 'auto-resume could not handle an execution');
    return { execution_id: id, action: 'skipped', error: err instanceof Error ? err.message : String(err) };
  }
}

function objectOf(value: unknown): Record<string, unknown> {
  return isObject(value) ? { ...value } : {};
}
