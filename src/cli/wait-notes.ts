import * as v from 'valibot';
import { EVENT } from '../../machines/event-types.ts';
import { TaskTimer } from './task-timer-text.ts';

// What `svc run --wait` says when its execution stops moving for a reason of its own: a step that
// waits for a signal (and the command that sends it), a step's timer, a retry's delay, a pause and
// its resume. Without these the progress stood at `step approve started` for as long as the
// approval took (a day), and a paused execution looked like one still running.

const Awaited = v.looseObject({ signal: v.string(), timeout_at: v.optional(v.nullable(v.string())), approval_roles: v.optional(v.nullable(v.array(v.string()))) });
const Timer = v.looseObject({ wake_at: v.string() });
const Control = v.looseObject({ requested_by: v.optional(v.looseObject({ sub: v.string() })), reason: v.optional(v.string()) });

type Event = { event_type: string; step?: string | null; context?: unknown };

/** The line an event of execution `id` adds to the progress, or undefined for one that adds none. */
export function waitNote(id: number, e: Event): string | undefined {
  switch (e.event_type) {
    case EVENT.signalAwaited: {
      const c = v.safeParse(Awaited, e.context);
      if (!c.success) return undefined;
      const roles = c.output.approval_roles?.length ? ` (roles ${c.output.approval_roles.join(', ')})` : '';
      const timeout = c.output.timeout_at ? `, times out at ${c.output.timeout_at}` : '';
      return `step ${e.step ?? '?'} waits for signal ${c.output.signal}${roles}${timeout}: svc signal ${id} ${c.output.signal} --data JSON`;
    }
    case EVENT.timerSet: {
      const c = v.safeParse(Timer, e.context);
      if (!c.success) return undefined;
      const task = v.safeParse(TaskTimer, e.context);
      // A playbook task's timeout runs beside its child: nothing waits on it. Its retry's delay does.
      if (task.success) return task.output.for === 'retry' ? `step ${e.step ?? '?'} waits to start retry ${task.output.attempt} of ${task.output.task} at ${c.output.wake_at}` : undefined;
      return `step ${e.step ?? '?'} waits until ${c.output.wake_at}`;
    }
    case EVENT.executionPaused:
    case EVENT.executionResumed: {
      const c = v.safeParse(Control, e.context);
      const by = c.success && c.output.requested_by ? ` by ${c.output.requested_by.sub}` : '';
      const why = c.success && c.output.reason ? ` (${c.output.reason})` : '';
      return e.event_type === EVENT.executionPaused ? `paused${by}${why}: no step runs until it is resumed (svc resume ${id})` : `resumed${by}${why}`;
    }
  }
  return undefined;
}
