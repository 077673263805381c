// What one tick does with a due schedule, by its overlap and catch-up policies (pure:
// planSchedule and queuePick of src/triggers/scheduler.ts). docs/triggers.md, "Overlap" and
// "Catch-up and the misfire grace".
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { planSchedule } from '../../../src/triggers/scheduler.ts';
import { ScheduleTriggerSchema } from '../../../src/triggers/trigger.schema.ts';

const spec = (fields: Record<string, unknown>) => v.parse(ScheduleTriggerSchema, { name: 't', kind: 'schedule', ...fields });
const d = (hms: string) => new Date(`2030-01-01T${hms}Z`);
const iso = (dates: readonly Date[]) => dates.map((t) => t.toISOString().slice(11, 19));
/** A plan as [time, outcome] by time (started, or skipped with its reason's start), its next time, its cancels. */
function seen(plan: ReturnType<typeof planSchedule>) {
  return {
    fires: plan!.fires.map((f) => [f.fireKey.slice(11, 19), 'payload' in f ? 'start' : 'skipped' in f ? f.skipped.split(':')[0] : 'refused']).sort((x, y) => x[0]!.localeCompare(y[0]!)),
    next: plan!.next?.toISOString().slice(11, 19) ?? null,
    cancel: plan!.cancel,
  };
}

describe('overlap skip and cancel_previous: the newest due time of a tick starts', () => {
  it('skip, catch_up all, after a downtime: the on-time time starts, the caught-up ones are skipped', () => {
    const plan = planSchedule('t', spec({ cron: '* * * * *', overlap: 'skip', catch_up: 'all', max_catch_up: 3 }), d('16:48:00'), d('16:51:00.010'), [], d('16:51:00.010'));
    expect(seen(plan)).toEqual({
      fires: [
        ['16:48:00', 'overlap skip'],
        ['16:49:00', 'overlap skip'],
        ['16:50:00', 'overlap skip'],
        ['16:51:00', 'start'],
      ],
      next: '16:52:00',
      cancel: [],
    });
  });

  it('skip with a run unfinished: every due time is skipped, naming the run', () => {
    const plan = planSchedule('t', spec({ cron: '* * * * *', overlap: 'skip', catch_up: 'all', max_catch_up: 3 }), d('16:48:00'), d('16:51:00.010'), [7, 9], d('16:51:00.010'));
    expect(plan!.fires.map((f) => ('skipped' in f ? f.skipped : 'started'))).toEqual(Array(4).fill('overlap skip: execution 7, 9 still running'));
  });

  it('cancel_previous: the unfinished runs are cancelled, the newest due time starts, the older ones are skipped', () => {
    const plan = planSchedule('t', spec({ cron: '* * * * *', overlap: 'cancel_previous', catch_up: 'all', max_catch_up: 3 }), d('16:48:00'), d('16:51:00.010'), [7], d('16:51:00.010'));
    expect(seen(plan)).toMatchObject({ fires: [['16:48:00', 'overlap cancel_previous'], ['16:49:00', 'overlap cancel_previous'], ['16:50:00', 'overlap cancel_previous'], ['16:51:00', 'start']], cancel: [7] });
  });
});
