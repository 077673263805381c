// What one tick does with a due schedule, by its overlap and catch-up policies (pure:
// planSchedule and queuePick of src/triggers/scheduler.ts). docs/triggers.md, "Overlap" and
// "Catch-up and the misfire grace".
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { planSchedule, queuePick } from '../../../src/triggers/scheduler.ts';
import { ScheduleTriggerSchema } from '../../../src/triggers/trigger.schema.ts';

const spec = (fields: Record<string, unknown>) => v.parse(ScheduleTriggerSchema, { name: 't', kind: 'schedule', ...fields });
const d = (hms: string) => new Date(`2030-01-01T${hms}Z`);
const iso = (dates: readonly Date[]) => dates.map((t) => t.toISOString().slice(11, 19));
/** A plan as [time, outcome] by time (started, or skipped with its reason's start), its next time, its cancels. */
function seen(plan: ReturnType<typeof planSchedule>) {
  return {
    fires: plan.fires.map((f) => [f.fireKey.slice(11, 19), 'payload' in f ? 'start' : 'skipped' in f ? f.skipped.split(':')[0] : 'refused']).sort((x, y) => x[0]!.localeCompare(y[0]!)),
    next: plan.next?.toISOString().slice(11, 19) ?? null,
    cancel: plan.cancel,
    waiting: plan.waiting,
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
      waiting: false,
    });
  });

  it('skip with a run unfinished: every due time is skipped, naming the run', () => {
    const plan = planSchedule('t', spec({ cron: '* * * * *', overlap: 'skip', catch_up: 'all', max_catch_up: 3 }), d('16:48:00'), d('16:51:00.010'), [7, 9], d('16:51:00.010'), null, new Map([[7, 'running'], [9, 'running']]));
    expect(plan.fires.map((f) => ('skipped' in f ? f.skipped : 'started'))).toEqual(Array(4).fill('overlap skip: execution 7, 9 still running'));
  });

  it('skip names each run by its real status: a queued or paused run is not running', () => {
    const skipSpec = spec({ cron: '* * * * *', overlap: 'skip', catch_up: 'latest' });
    const reason = (statuses: [number, string][]) => planSchedule('t', skipSpec, d('16:51:00'), d('16:51:00.010'), statuses.map(([id]) => id), d('16:51:00.010'), null, new Map(statuses)).fires.map((f) => ('skipped' in f ? f.skipped : 'started'));
    expect(reason([[7, 'queued']])).toEqual(['overlap skip: execution 7 still queued']);
    expect(reason([[7, 'running'], [9, 'paused']])).toEqual(['overlap skip: execution 7 (running), 9 (paused) still unfinished']);
  });

  it('cancel_previous: the unfinished runs are cancelled, the newest due time starts, the older ones are skipped', () => {
    const plan = planSchedule('t', spec({ cron: '* * * * *', overlap: 'cancel_previous', catch_up: 'all', max_catch_up: 3 }), d('16:48:00'), d('16:51:00.010'), [7], d('16:51:00.010'));
    expect(seen(plan)).toMatchObject({ fires: [['16:48:00', 'overlap cancel_previous'], ['16:49:00', 'overlap cancel_previous'], ['16:50:00', 'overlap cancel_previous'], ['16:51:00', 'start']], cancel: [7] });
  });
});

describe('overlap queue', () => {
  const queue = spec({ cron: '*/10 * * * * *', overlap: 'queue' });

  it('while a run is unfinished every due time waits, however old; the row stays at the oldest', () => {
    expect(seen(planSchedule('t', queue, d('16:42:20'), d('16:43:15'), [5], d('16:43:15')))).toEqual({ fires: [], next: '16:42:20', cancel: [], waiting: true });
  });

  it('when the run has ended, the oldest time that waited for it starts, older than the grace or not; the next waits', () => {
    // The run ended at 16:43:20: 16:42:20 waited for it, 61 s ago.
    const plan = planSchedule('t', queue, d('16:42:20'), d('16:43:21'), [], d('16:43:21'), d('16:43:20'));
    expect(seen(plan)).toEqual({ fires: [['16:42:20', 'start']], next: '16:42:30', cancel: [], waiting: false });
  });

  it('at most max_catch_up wait: when the run ends, the older ones are dropped, recorded with the reason, and the oldest kept starts', () => {
    const bounded = spec({ cron: '*/10 * * * * *', overlap: 'queue', max_catch_up: 3 });
    const plan = planSchedule('t', bounded, d('16:42:20'), d('16:43:15'), [], d('16:43:15'), d('16:43:14'));
    expect(seen(plan)).toEqual({
      fires: [...['16:42:20', '16:42:30', '16:42:40'].map((t) => [t, 'overlap queue']), ['16:42:50', 'start']],
      next: '16:43:00',
      cancel: [],
      waiting: false,
    });
    expect('skipped' in plan.fires[0]! && plan.fires[0].skipped).toBe('overlap queue: more than 3 due times waiting (max_catch_up)');
  });

  it('the times after the end of the last run that no tick saw were missed: catch-up decides, the on-time ones wait their turn', () => {
    const s = { cron: '*/10 * * * * *', timezone: 'UTC', max_catch_up: 10 };
    // A run ended at 16:40:05 (16:40:00 waited for it), then ten minutes down.
    const at = d('16:50:00.500');
    expect(iso(queuePick({ ...s, catch_up: 'none' }, d('16:40:00'), at, d('16:40:05')).waiting)).toEqual(['16:40:00', '16:49:10', '16:49:20', '16:49:30', '16:49:40', '16:49:50', '16:50:00']);
    expect(iso(queuePick({ ...s, catch_up: 'latest' }, d('16:40:00'), at, d('16:40:05')).waiting)).toEqual(['16:40:00', '16:49:10', '16:49:20', '16:49:30', '16:49:40', '16:49:50', '16:50:00']);
    const all = queuePick({ ...s, catch_up: 'all', max_catch_up: 8 }, d('16:40:00'), at, d('16:40:05'));
    expect(iso(all.waiting)).toEqual(['16:48:50', '16:49:00', '16:49:10', '16:49:20', '16:49:30', '16:49:40', '16:49:50', '16:50:00']);
    // What waited, and the picked missed times, are dropped past the bound; the missed ones not picked are not fires.
    expect(iso(all.dropped)).toEqual(['16:40:00', '16:47:50', '16:48:00', '16:48:10', '16:48:20', '16:48:30', '16:48:40']);
    // No run before: nothing waited.
    expect(iso(queuePick({ ...s, catch_up: 'none' }, d('16:40:00'), at, null).waiting)).toEqual(['16:49:10', '16:49:20', '16:49:30', '16:49:40', '16:49:50', '16:50:00']);
  });

  it('a long wait drops at most 1,000 times a tick, and says where the next tick goes on', () => {
    const s = { cron: '* * * * * *', timezone: 'UTC', catch_up: 'latest' as const, max_catch_up: 10 };
    const first = queuePick(s, d('10:00:00'), d('12:00:00'), d('12:00:00'));
    expect(first.dropped).toHaveLength(1000);
    expect(iso([first.dropped[0]!, first.dropped[999]!, first.more!])).toEqual(['10:00:00', '10:16:39', '10:16:40']);
    expect(first.waiting).toEqual([]);
    const plan = planSchedule('t', spec({ ...s, overlap: 'queue' }), d('10:00:00'), d('12:00:00'), [], d('12:00:00'), d('12:00:00'));
    expect(plan.fires.every((f) => 'skipped' in f)).toBe(true);
    expect(seen(plan).next).toBe('10:16:40');
    const last = queuePick(s, d('11:56:40'), d('12:00:00'), d('12:00:00'));
    expect([last.dropped.length, last.more]).toEqual([191, undefined]);
    expect(iso(last.waiting)).toEqual(['11:59:51', '11:59:52', '11:59:53', '11:59:54', '11:59:55', '11:59:56', '11:59:57', '11:59:58', '11:59:59', '12:00:00']);
  });
});
