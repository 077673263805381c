import { EVENT } from '../machines/event-types.ts';
import type { ExecutionInput } from '../machines/execution/types.ts';
import { hasChildTaskTimerEvent } from '../src/db/child-task-timer-events.ts';
import type { EventRow } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { isObject } from '../src/objects.ts';

// Before d064124 a `playbook` task's timeout_seconds and retry had no effect: the machine issued
// no timer for them, so a log written then numbers the seqs after a child's start without one, and
// a failed child failed its step. Folded by a machine that issues them, such a log lost its place:
// a later command's report named a seq the fold had given to a timer (the execution, upgraded in
// place, waited for ever), and a finished execution showed a step waiting for a retry. A start
// records `childTaskTimers: true` now; one recorded without it was written by a machine without
// them unless its log holds one of their events (the builds between d064124 and this, whose logs
// do wherever the difference showed), and is folded as it was written: `childTaskTimers: false`.

/** Whether `input`, as a start recorded it, leaves the machine's treatment of playbook tasks to be decided from its log. */
export function undecided(input: ExecutionInput): boolean {
  return input.childTaskTimers === undefined;
}

/** `input` with `childTaskTimers` decided from its execution's log in the database, when its start did not record it. */
export async function withChildTaskTimers(q: Queryable, input: ExecutionInput): Promise<ExecutionInput> {
  if (!undecided(input)) return input;
  return { ...input, childTaskTimers: await hasChildTaskTimerEvent(q, input.executionId) };
}

/** `input` with `childTaskTimers` decided from `rows`, the execution's whole log, when its start did not record it. */
export function withChildTaskTimersOf(input: ExecutionInput, rows: readonly Pick<EventRow, 'event_type' | 'context'>[]): ExecutionInput {
  if (!undecided(input)) return input;
  return { ...input, childTaskTimers: rows.some(isChildTaskTimerEvent) };
}

function isChildTaskTimerEvent(row: Pick<EventRow, 'event_type' | 'context'>): boolean {
  if (!isObject(row.context)) return false;
  if (row.event_type === EVENT.timerSet) return 'for' in row.context;
  return row.event_type === EVENT.childStarted && 'attempt' in row.context;
}
