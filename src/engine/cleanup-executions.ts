import type { EngineDeps } from '../../actors/engine-deps.ts';
import type { Identity } from '../auth/identity.ts';
import { runningStartedBefore, type StaleExecution, type StaleRunning } from '../db/execution.repo.ts';
import { executionStatuses, liveDescendants } from '../db/live-descendants.ts';
import { cancelExecution } from './cancel-execution.ts';
import { plural } from '../plural.ts';

const PAGE = 200;
/** One cleanup handles at most this many executions; the message says when more remain. */
const CLEANUP_MAX_EXECUTIONS = 10_000;

export type CleanupResult = {
  cancelled_count: number;
  execution_ids: number[];
  executions: { execution_id: number; path: string; parent_execution_id: number | null; started_at: string }[];
  message: string;
};

/**
 * The operator's cleanup: every execution with no terminal event started over
 * `olderThanMinutes` ago is cancelled (reason `cleanup`), parents before children, through its
 * machine (see cancelExecution). A cancel cascades to the execution's live descendants, however
 * young: they are listed too (after the stale ones), so the answer names every execution the
 * cleanup cancels (or, dry, would cancel). A dry run changes nothing and lists the same
 * executions. Lists what this call cancelled: not those that finished otherwise meanwhile, nor
 * those another caller (a cleanup at once) cancelled first.
 * `requestedBy` (who asked) is recorded on each cancel.
 */
export async function cleanupStuckExecutions(deps: EngineDeps, opts: { olderThanMinutes: number; dryRun: boolean; requestedBy?: Identity }): Promise<CleanupResult> {
  const found: StaleRunning[] = [];
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
  // Parents before their children, by the parent link (an id is no order of them): a child
  // cancelled first would end its parent's playbook task, and the parent move on (fail, say)
  // before its own cancel. A tree's executions together, in the order of their roots.
  found.sort((a, b) => a.root_execution_id - b.root_execution_id || a.depth - b.depth || a.execution_id - b.execution_id);
  // Children started within the age (a parent's late step) go with their parent's cancel.
  const descendants = await liveDescendants(deps.db, found.map((e) => e.execution_id));
  const done: StaleExecution[] = [];
  const withThem: StaleExecution[] = [];
  if (opts.dryRun) {
    done.push(...found);
    withThem.push(...descendants);
  } else {
    // What this call cancelled: its own cancels, and the children they took along. An execution
    // another caller cancelled meanwhile (a cleanup at once) is that one's, not listed here.
    const mine = new Set<number>();
    const byMine = (e: StaleExecution) => e.parent_execution_id !== null && mine.has(e.parent_execution_id);
    for (const e of found) {
      const out = await cancelExecution(deps, e.execution_id, { reason: 'cleanup', older_than_minutes: opts.olderThanMinutes, requested_by: opts.requestedBy });
      // A child is usually cancelled already, by its parent's cancel a moment before (parents go first).
      if (out.cancelled || (out.status === 'cancelled' && byMine(e))) {
        mine.add(e.execution_id);
        done.push(e);
      }
    }
    const statuses = await executionStatuses(deps.db, descendants.map((e) => e.execution_id));
    const ended = descendants.filter((e) => statuses.get(e.execution_id) === 'cancelled');
    // Down the parent links from this call's cancels (the list is in no parent-first order).
    for (let grew = true; grew; ) {
      grew = false;
      for (const e of ended) {
        if (mine.has(e.execution_id) || !byMine(e)) continue;
        mine.add(e.execution_id);
        grew = true;
      }
    }
    withThem.push(...ended.filter((e) => mine.has(e.execution_id)));
  }
  const age = `with no terminal event started over ${plural(opts.olderThanMinutes, 'minute')} ago`;
  const children = withThem.length ? ` and ${plural(withThem.length, 'execution')} they started` : '';
  const more = truncated ? `; more remain, run it again` : '';
  const message = opts.dryRun
    ? `dry run: ${plural(done.length, 'execution')} ${age}${children} would be cancelled; nothing was changed${more}`
    : `cancelled ${plural(done.length, 'execution')} ${age}${children}${more}`;
  done.push(...withThem);
  if (!opts.dryRun && done.length) deps.log.info({ executions: done.map((e) => e.execution_id), older_than_minutes: opts.olderThanMinutes }, 'cleanup cancelled stuck executions');
  return {
    cancelled_count: done.length,
    execution_ids: done.map((e) => e.execution_id),
    executions: done.map((e) => ({ execution_id: e.execution_id, path: e.path, parent_execution_id: e.parent_execution_id, started_at: e.started_at.toISOString() })),
    message,
  };
}
