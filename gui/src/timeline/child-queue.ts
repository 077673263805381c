// A child execution that its playbook's `concurrency` holds is `queued` from its start (the
// parent's child.started) until it is admitted: the parent's log does not say so, its step route
// does (GET /api/executions/{id}/steps/{step}: the run `queued`, started_at null, then started_at
// its admission). The Gantt drew such a child running from its start.
import type { Bar } from './model.ts';

/** A child's run as the step route answers it. */
export type ChildRun = { child_execution_id: number | null; status: string; started_at: string | null };

/** The words for the time a child was queued (the Gantt's grey lead-in, the bar's details). */
export const CHILD_QUEUED = 'queued on its playbook’s concurrency limit';

/**
 * The bars with each child's queue as its run says: a child still queued is `queued` (its bar
 * from its start, not running); one admitted later than it started runs from its admission, the
 * time before it (`queuedFrom`) queued; one paused by hand is `paused` (drawn running, nothing
 * said why the step did not move on). Other bars, and children the runs do not name, as they were.
 */
export function withChildRuns(bars: readonly Bar[], runs: readonly ChildRun[]): Bar[] {
  const byChild = new Map<number, ChildRun>();
  for (const r of runs) if (r.child_execution_id !== null) byChild.set(r.child_execution_id, r);
  return bars.map((b) => {
    const run = b.kind === 'child' && b.childExecutionId !== undefined ? byChild.get(b.childExecutionId) : undefined;
    if (!run) return b;
    if (run.started_at === null) return run.status === 'queued' && b.end === null ? { ...b, status: 'queued' } : b;
    const held = run.status === 'paused' && b.end === null ? { ...b, status: 'paused' as const } : b;
    const admitted = Date.parse(run.started_at);
    if (Number.isNaN(admitted) || admitted <= b.start || (b.end !== null && admitted > b.end)) return held;
    return { ...held, queuedFrom: b.start, start: admitted };
  });
}
