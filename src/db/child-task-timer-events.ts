import { EVENT } from '../../machines/event-types.ts';
import type { Queryable } from './queryable.ts';

// A playbook task's own timer (timer.set with `for`) or its retry's next child (child.started with
// `attempt`): events only a machine that gives playbook tasks timers writes. The event_pkey scan of
// one execution; read once per execution whose start does not say (actors/child-task-timers.ts).
const CHILD_TASK_TIMER_EVENT = `SELECT EXISTS (SELECT 1 FROM core.event
   WHERE execution_id = $1 AND ((event_type = $2 AND context ? 'for') OR (event_type = $3 AND context ? 'attempt'))) AS found`;

/** Whether an execution's log holds an event of a `playbook` task's own timers (its timeout, its retry). */
export async function hasChildTaskTimerEvent(q: Queryable, executionId: number): Promise<boolean> {
  const { rows } = await q.query<{ found: boolean }>(CHILD_TASK_TIMER_EVENT, [executionId, EVENT.timerSet, EVENT.childStarted]);
  return rows[0]?.found === true;
}
