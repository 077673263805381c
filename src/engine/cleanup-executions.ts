import type { EngineDeps } from '../../actors/engine-deps.ts';
import type { Identity } from '../auth/identity.ts';
import { runningStartedBefore, type StaleExecution } from '../db/execution.repo.ts';
import { cancelExecution } from './cancel-execution.ts';

const PAGE = 200;
/** One cleanup handles at most this many executions; the message says when more remain. */
const CLEANUP_MAX_EXECUTIONS = 10_000;

export type CleanupResult = {
  cancelled_count: number;
  execution_ids: number[];
  executions: { execution_id: number; path: string; parent_execution_id: number | null; started_at: string }[];
  message: string;
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The operator's cleanup: every execution with no terminal event started over
 * `olderThanMinutes` ago is cancelled (reason `cleanup`), parents before children, through its
 * machine (see cancelExecution). A dry run changes nothing and lists the same executions. Lists
 * those that ended cancelled (children of a cancelled parent included), not those that finished
 * otherwise meanwhile. `requestedBy` (who asked) is recorded on each cancel.
 */
export async function cleanupStuckExecutions(deps: EngineDeps, opts: { olderThanMinutes: number; dryRun: boolean; requestedBy?: Identity }): Promise<CleanupResult> {
  const found: StaleExecution[] = [];
  let truncated = false;
  for (let after = 0; ; ) {
    const page = await runningStartedBefore(deps.db, { olderThanMinutes: opts.olderThanMinutes, afterId: after, limit: PAGE });
    found.push(...page);
    if (found.length >= CLEANUP_MAX_EXECUTIONS) {
      truncated = page.length === PAGE;
      found.length = CLEANUP_MAX_EXECUTIONS;
      break;
    }
    if (page.length < PAGE) break;
    after = page.at(-1)!.execution_id;
  }
  const done: StaleExecution[] = [];
  if (opts.dryRun) done.push(...found);
  else {
    for (const e of found) {
      const out = await cancelExecution(deps, e.execution_id, { reason: 'cleanup', older_than_minutes: opts.olderThanMinutes, requested_by: opts.requestedBy });
      // A child is usually cancelled already, by its parent's cancel a moment before.
      if (out.cancelled || out.status === 'cancelled') done.push(e);
    }
  }
  const age = `with no terminal event started over ${plural(opts.olderThanMinutes, 'minute')} ago`;
  const more = truncated ? `; more remain, run it again` : '';
  const message = opts.dryRun
    ? `dry run: ${plural(done.length, 'execution')} ${age} would be cancelled; nothing was changed${more}`
    : `cancelled ${plural(done.length, 'execution')} ${age}${more}`;
  if (!opts.dryRun && done.length) deps.log.info({ executions: done.map((e) => e.execution_id), older_than_minutes: opts.olderThanMinutes }, 'cleanup cancelled stuck executions');
  return {
    cancelled_count: done.length,
    execution_ids: done.map((e) => e.execution_id),
    executions: done.map((e) => ({ execution_id: e.execution_id, path: e.path, parent_execution_id: e.parent_execution_id, started_at: e.started_at.toISOString() })),
    message,
  };
}
