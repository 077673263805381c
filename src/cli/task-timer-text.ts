import * as v from 'valibot';

/** A `playbook` task's own timer, as its timer.set's context and GET /api/executions/{id} `waits` name it. */
export const TaskTimer = v.looseObject({ for: v.picklist(['timeout', 'retry']), task: v.string(), attempt: v.number() });

/** What a `playbook` task's timer is for: `playbook task kid: timeout`, `retry 2 of kid`; undefined for any other (a step's own wait). */
export function taskTimerText(context: unknown): string | undefined {
  const t = v.safeParse(TaskTimer, context);
  if (!t.success) return undefined;
  return t.output.for === 'timeout' ? `playbook task ${t.output.task}: timeout` : `retry ${t.output.attempt} of ${t.output.task}`;
}
