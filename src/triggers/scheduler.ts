import { clockedLoop } from '../periodic/clocked-loop.ts';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import type { Queryable } from '../db/queryable.ts';
import { earliestScheduledFire, findFires, lookAtSchedules, queuedThrough, recordFires, runStatuses, shelveSchedules, unfinishedRuns, type TriggerFireRow, type TriggerRow } from '../db/trigger.repo.ts';
import { firesBetween, latestFires, nextFire } from './cron-schedule.ts';
import { fireGroups, renderTriggerPayload, type Fire, type FireGroup } from './fire-trigger.ts';
import { ScheduleClock } from './schedule-clock.ts';
import { storedSchedule } from './stored-schedule.ts';
import type { ScheduleTrigger } from './trigger.schema.ts';
import { databaseNow } from '../waits/wait-clock.ts';

// The timekeeper of schedules: it sleeps until the earliest next fire of any schedule (at most
// SCHEDULER_MAX_SLEEP_MS, so a schedule registered on another server is seen soon), then fires
// what is due, every due schedule in one transaction. Every server runs one; a tick takes the
// schedules' rows (FOR UPDATE SKIP LOCKED) and moves their next fire times in the transaction that
// starts the fires, and each fire's key is unique, so two servers never fire one time twice and a crash mid-tick loses nothing: the row
// still says the time is due.

/** Longest sleep between looks at the schedules. */
export const SCHEDULER_MAX_SLEEP_MS = 1000;
/** A due time later than this at its tick was missed (downtime): the catch-up policy decides, unless it waited for a run (overlap `queue`). */
export const MISFIRE_GRACE_MS = 60_000;
/**
 * A schedule still due after a tick waits for its previous run (overlap `queue`): looked at again
 * after this, or at once when that run ends on this server (ScheduleClock).
 */
const QUEUED_RECHECK_MS = 500;
/** Schedules handled per look; more wait for the next, at once. */
const DUE_PER_TICK = 100;
/**
 * Due times one tick records as dropped from a schedule's queue (overlap `queue`, beyond
 * `max_catch_up`); more (a long downtime behind an unfinished run) go in the next ticks.
 */
const QUEUE_DROPS_PER_TICK = 1000;

export type Clock = () => Date;

/**
 * What one tick did, for tests and logs; `waiting`: schedules whose due time waits for their
 * unfinished `runs` (overlap `queue`); `next`: the earliest next fire after those due, as the tick
 * read it with them (the due ones' own next times are moved by the tick).
 */
export type TickReport = { schedules: number; started: number; skipped: number; refused: number; raced: number; waiting: { path: string; name: string; runs: number[] }[]; next: Date | null };

/**
 * Fires every schedule due at `now()`, all in ONE transaction (fire-trigger.ts fireGroups): the
 * catch-up policy picks among each schedule's due times, the overlap policy decides what its
 * previous unfinished run means, and each schedule's fires and its next time are written
 * together. A schedule another server holds is left to it (`raced`). `passOver`: schedules a tick
 * just found waiting (overlap queue), not looked at again: a look holds DUE_PER_TICK schedules,
 * and those waiting, due since their oldest time, would fill every look before the others.
 */
export async function runScheduleTick(deps: EngineDeps, now: Clock = () => new Date(), passOver: readonly { path: string; name: string }[] = []): Promise<TickReport> {
  const { due: looked, next } = await lookAtSchedules(deps.db, now(), DUE_PER_TICK, passOver);
  const report: TickReport = { schedules: 0, started: 0, skipped: 0, refused: 0, raced: 0, waiting: [], next };
  report.schedules = looked.length;
  if (looked.length === 0) return report;
  const at = now();
  // A row this version cannot read (its spec, its cron) is shelved, not left to fail every tick.
  const broken: { path: string; name: string; due: Date; error: string }[] = [];
  const shelve = (row: { path: string; name: string; next_fire_at: Date | null }, error: string) => broken.push({ path: row.path, name: row.name, due: row.next_fire_at!, error });
  const read = looked.flatMap((row) => {
    const r = storedSchedule(row.spec);
    if ('problem' in r) shelve(row, r.problem);
    return 'spec' in r ? [{ row, spec: r.spec }] : [];
  });
  const due = read.map((r) => r.row);
  const specs = read.map((r) => r.spec);
  const watched = due.filter((_, i) => specs[i].overlap !== 'allow');
  const unfinished = watched.length ? await unfinishedRuns(deps.db, watched, deps.config.RESUME_WINDOW_MINUTES) : new Map<string, number[]>();
  const key = (row: { path: string; name: string }) => `${row.path}\n${row.name}`;
  const statuses = await runStatuses(deps.db, [...unfinished.values()].flat());
  // A queue whose oldest due time is past the grace and whose runs all ended: did it wait for them?
  const asked = due.filter((row, i) => specs[i].overlap === 'queue' && !unfinished.has(key(row)) && row.next_fire_at!.getTime() < at.getTime() - MISFIRE_GRACE_MS);
  const waited = asked.length ? await queuedThrough(deps.db, asked.map((row) => ({ path: row.path, name: row.name, before: row.next_fire_at! }))) : new Map<string, Date>();
  const firedAt = at;
  const plans = due.flatMap((row, i) => {
    const runs = unfinished.get(key(row)) ?? [];
    let plan: Plan;
    try {
      plan = planSchedule(row.name, specs[i], row.next_fire_at!, at, runs, firedAt, waited.get(key(row)) ?? null, statuses);
    } catch (err) {
      // A cron the library no longer takes: its arithmetic throws.
      shelve(row, `the stored schedule no longer reads (cron: ${err instanceof Error ? err.message : String(err)}): register a new version of the playbook`);
      return [];
    }
    if (plan.waiting) report.waiting.push({ path: row.path, name: row.name, runs });
    return plan.waiting ? [] : [{ row, plan }];
  });
  if (broken.length) {
    deps.log.warn({ schedules: broken.map((b) => `${b.path}/${b.name}`), problem: broken[0].error }, 'schedules that no longer read are shelved until registered again');
    await shelveSchedules(deps.db, broken);
    report.refused += broken.length;
  }
  if (plans.length === 0) return report;
  // The newest due time replaces whatever still runs (cancel_previous): the runs are cancelled in
  // the transaction that starts it, so only if it starts (not refused, not a duplicate, not raced
  // by another server's tick of the same time, whose new run may be among them).
  const groups: FireGroup[] = plans.map(({ row, plan }) => ({ trigger: { path: row.path, name: row.name, kind: 'schedule' }, fires: plan.fires, tick: { from: row.next_fire_at!, to: plan.next, catalogId: Number(row.catalog_id) }, replaces: plan.cancel }));
  const results = await fireGroups(deps, groups);
  // On the clock the due times were read by (the database's, in a server's scheduler), as the schedule's times are.
  const committed = now().getTime();
  for (const [gi, result] of results.entries()) {
    if (result.raced) {
      report.raced++;
      continue;
    }
    for (const [fi, r] of result.results.entries()) {
      if (r.duplicate) continue;
      report[r.outcome === 'started' ? 'started' : r.outcome === 'skipped' ? 'skipped' : 'refused']++;
      if (r.outcome === 'started') deps.metrics.triggerFireLateness.observe(Math.max(0, committed - groups[gi].fires[fi].scheduledTime!.getTime()) / 1000);
    }
  }
  return report;
}

/**
 * The unfinished runs a skip waited for, by their real status: `execution 7 still queued`, or of
 * several statuses `execution 7 (running), 9 (paused) still unfinished`. A queued or paused run
 * was called running, which sent readers looking for work that was not running. A run whose
 * status was not read (it ended meanwhile) reads as unfinished.
 */
export function unfinishedText(ids: readonly number[], statuses: ReadonlyMap<number, string>): string {
  const of = ids.map((id) => statuses.get(id) ?? 'unfinished');
  const one = new Set(of).size === 1;
  return one ? `execution ${ids.join(', ')} still ${of[0]}` : `execution ${ids.map((id, i) => `${id} (${of[i]})`).join(', ')} still unfinished`;
}

/** What a tick does with one due schedule: fires to make, its next fire time, runs to cancel; `waiting`: its due times wait for `unfinished` runs (overlap queue). */
type Plan = { fires: Fire[]; next: Date | null; cancel: number[]; waiting: boolean };

/**
 * What a tick does with one due schedule at `at`: which due times start, which are skipped (and
 * why), which runs to cancel, and its next fire time. `queuedUntil` (overlap queue, no run
 * unfinished): the due times up to then waited for a run, whatever their age (queuedThrough).
 */
export function planSchedule(name: string, spec: ScheduleTrigger, from: Date, at: Date, unfinished: readonly number[], firedAt: Date, queuedUntil: Date | null = null, statuses: ReadonlyMap<number, string> = new Map()): Plan {
  const start = (t: Date): Fire => ({ fireKey: t.toISOString(), scheduledTime: t, ...renderTriggerPayload(spec.payload, { trigger: { name, kind: 'schedule', scheduled_time: t.toISOString(), fired_at: firedAt.toISOString() } }) });
  const skip = (why: string) => (t: Date): Fire => ({ fireKey: t.toISOString(), scheduledTime: t, skipped: why });
  if (spec.overlap === 'queue') {
    // One run at a time, oldest first: while one is unfinished every due time waits, the row stays
    // due at the oldest, and nothing is read or written (queuedThrough tells later that they waited).
    if (unfinished.length > 0) return { fires: [], next: from, cancel: [], waiting: true };
    const q = queuePick(spec, from, at, queuedUntil);
    const dropped = q.dropped.map(skip(`overlap queue: more than ${spec.max_catch_up} due times waiting (max_catch_up)`));
    if (q.more) return { fires: dropped, next: q.more, cancel: [], waiting: false };
    const [first, second] = q.waiting;
    return { fires: [...dropped, ...(first ? [start(first)] : [])], next: second ?? nextFire(spec.cron, spec.timezone, at), cancel: [], waiting: false };
  }
  const dueTimes = duePick(spec, from, at);
  const next = nextFire(spec.cron, spec.timezone, at);
  if (spec.overlap === 'allow') return { fires: dueTimes.map(start), next, cancel: [], waiting: false };
  // skip and cancel_previous: one run per tick, the newest due time (the on-time one after a downtime).
  const [older, newest] = [dueTimes.slice(0, -1), dueTimes.slice(-1)];
  if (spec.overlap === 'cancel_previous') return { fires: [...older.map(skip('overlap cancel_previous: one run per tick')), ...newest.map(start)], next, cancel: [...unfinished], waiting: false };
  if (unfinished.length > 0) return { fires: dueTimes.map(skip(`overlap skip: ${unfinishedText(unfinished, statuses)}`)), next, cancel: [], waiting: false };
  return { fires: [...older.map(skip('overlap skip: one run per tick')), ...newest.map(start)], next, cancel: [], waiting: false };
}

/**
 * Records, in the pausing transaction `q` (the pause holds the trigger's row), the due times a
 * queue schedule holds at `at` as skipped (pausedQueue) and moves its next fire past them; a time
 * recorded already (a backfill of it) stays as it was. Other schedules hold no due times. `why`
 * ends the queue: a pause, or a new version that removes the schedule or changes its cron.
 * Returns how many it recorded, for the caller to count once `q` commits (countSkipped).
 */
export async function recordPausedQueue(q: Queryable, row: TriggerRow, at: Date, config: Pick<EngineDeps['config'], 'RESUME_WINDOW_MINUTES'>, why = 'trigger paused'): Promise<number> {
  const read = storedSchedule(row.spec);
  const from = row.next_fire_at;
  if ('problem' in read || read.spec.overlap !== 'queue' || !from || from.getTime() > at.getTime()) return 0;
  const { spec } = read;
  const key = `${row.path}\n${row.name}`;
  const runs = (await unfinishedRuns(q, [row], config.RESUME_WINDOW_MINUTES)).get(key) ?? [];
  // As a tick asks it (runScheduleTick): did times older than the grace wait for a run that ended?
  const asked = runs.length === 0 && from.getTime() < at.getTime() - MISFIRE_GRACE_MS;
  const queuedUntil = asked ? ((await queuedThrough(q, [{ path: row.path, name: row.name, before: from }])).get(key) ?? null) : null;
  const fires = pausedQueue(spec, from, at, runs, queuedUntil, await runStatuses(q, runs), why);
  const recorded = new Set((await findFires(q, fires.map((f) => ({ path: row.path, name: row.name, fireKey: f.fireKey })))).map((r) => r.fire_key));
  const rows = fires.flatMap((f): TriggerFireRow[] =>
    'skipped' in f && !recorded.has(f.fireKey) ? [{ path: row.path, name: row.name, fire_key: f.fireKey, outcome: 'skipped', execution_id: null, scheduled_time: f.scheduledTime, error: f.skipped }] : [],
  );
  await recordFires(q, rows, [{ path: row.path, name: row.name, from, to: nextFire(spec.cron, spec.timezone, at) }]);
  return rows.length;
}

/** After the commit of recordPausedQueue's transaction: svc_trigger_fires_total counts the `n` skipped (a rolled-back one recorded none). */
export function countSkipped(deps: Pick<EngineDeps, 'metrics'>, n: number): void {
  if (n) deps.metrics.triggerFires.inc({ kind: 'schedule', outcome: 'skipped' }, n);
}

/**
 * What pausing an overlap `queue` schedule at `at` does with the due times it holds from `from`
 * (docs/triggers.md, "Pause and resume"): each is recorded as skipped, never left to start after
 * a resume. The newest `max_catch_up` for the pause, the older ones as a tick drops them (queuePick).
 */
export function pausedQueue(spec: ScheduleTrigger, from: Date, at: Date, unfinished: readonly number[], queuedUntil: Date | null, statuses: ReadonlyMap<number, string> = new Map(), why = 'trigger paused'): Fire[] {
  const skip = (reason: string) => (t: Date): Fire => ({ fireKey: t.toISOString(), scheduledTime: t, skipped: reason });
  const paused = skip(`${why} while this time waited its turn${unfinished.length ? ` (${unfinishedText(unfinished, statuses)})` : ''}`);
  const dropped = skip(`overlap queue: more than ${spec.max_catch_up} due times waiting (max_catch_up)`);
  const out: Fire[] = [];
  // With a run unfinished every due time up to the pause waited for it.
  const waitedUntil = unfinished.length ? at : queuedUntil;
  for (let start = from; ; ) {
    const q = queuePick(spec, start, at, waitedUntil);
    out.push(...q.dropped.map(dropped));
    if (!q.more) return [...out, ...q.waiting.map(paused)];
    start = q.more;
  }
}

/**
 * A queue's due times at `at`, oldest first: those up to `queuedUntil` waited for a run, whatever
 * their age; of the rest, those within the grace are on time and the older ones were missed
 * (downtime), picked by the catch-up policy (duePick). The newest `max_catch_up` of them wait
 * (`waiting`), the older ones are `dropped`. More than QUEUE_DROPS_PER_TICK to drop: the oldest
 * that many are, `more` is the next one, and nothing waits yet (the next tick goes on from `more`).
 */
export function queuePick(spec: Pick<ScheduleTrigger, 'cron' | 'timezone' | 'catch_up' | 'max_catch_up'>, from: Date, at: Date, queuedUntil: Date | null): { waiting: Date[]; dropped: Date[]; more?: Date } {
  const graceStart = at.getTime() - MISFIRE_GRACE_MS;
  // The times that waited: [from, waitedTo]; all of them when the wait reaches the grace.
  const waitedTo = queuedUntil === null ? from.getTime() - 1 : queuedUntil.getTime() >= graceStart ? at.getTime() : Math.min(queuedUntil.getTime(), at.getTime());
  const most = spec.max_catch_up + QUEUE_DROPS_PER_TICK;
  const waited = waitedTo < from.getTime() ? [] : firesBetween(spec.cron, spec.timezone, from, new Date(waitedTo + 1), most + 1);
  if (waited.length > most) return { waiting: [], dropped: waited.slice(0, QUEUE_DROPS_PER_TICK), more: waited[QUEUE_DROPS_PER_TICK] };
  const after = new Date(Math.max(from.getTime(), waitedTo + 1));
  const due = [...waited, ...(after.getTime() <= at.getTime() ? duePick(spec, after, at) : [])];
  const kept = Math.min(due.length, spec.max_catch_up);
  return { waiting: due.slice(due.length - kept), dropped: due.slice(0, due.length - kept) };
}

/**
 * The due times a tick fires, oldest first: those within the grace, and of the missed ones (older,
 * from downtime) none, the latest, or the latest `max_catch_up`, by the catch-up policy.
 */
export function duePick(spec: Pick<ScheduleTrigger, 'cron' | 'timezone' | 'catch_up' | 'max_catch_up'>, from: Date, now: Date): Date[] {
  const graceStart = new Date(Math.max(from.getTime(), now.getTime() - MISFIRE_GRACE_MS));
  const onTime = firesBetween(spec.cron, spec.timezone, graceStart, new Date(now.getTime() + 1), spec.max_catch_up + 1000);
  if (spec.catch_up === 'none' || graceStart.getTime() <= from.getTime()) return onTime;
  const missedUntil = new Date(graceStart.getTime() - 1);
  const keep = spec.catch_up === 'all' ? spec.max_catch_up : onTime.length > 0 ? 0 : 1;
  const missed = latestFires(spec.cron, spec.timezone, missedUntil, keep).filter((t) => t.getTime() >= from.getTime());
  return [...missed, ...onTime];
}

/**
 * Runs the schedules' timekeeper until stopped: a tick, then a sleep until the earliest next fire
 * (never longer than SCHEDULER_MAX_SLEEP_MS). `clock` ends a sleep early: a run a waiting schedule
 * awaits ended here.
 */
export function startScheduler(deps: EngineDeps, clock: ScheduleClock, now?: Clock): { stop(): Promise<void> } {
  // Due is decided on PostgreSQL's clock, as waits are (the server reads it at its start, the
  // timekeeper at each look): a server whose own clock ran ahead fired every schedule that much
  // early (30 s ahead: a time due at :00 started at :30 of the minute before).
  const current: Clock = now ?? (() => new Date(databaseNow(deps)));
  // The schedules found waiting by the ticks of this round (looks again at once, while each is full).
  let waiting: TickReport['waiting'] = [];
  const loop = clockedLoop(deps.log, 'schedule tick', clock.clock, SCHEDULER_MAX_SLEEP_MS, async () => {
    const report = await runScheduleTick(deps, current, waiting);
    waiting = [...waiting, ...report.waiting];
    clock.awaitRuns(waiting.flatMap((w) => w.runs));
    // More due: looked at again at once, past those waiting.
    if (report.schedules >= DUE_PER_TICK) return 0;
    const round = waiting;
    waiting = [];
    // Schedules waiting for their previous run are looked at again after QUEUED_RECHECK_MS; the rest at their time.
    // Nothing was due: the look read the next fire (one statement a look while idle).
    const earliest = report.schedules === 0 && round.length === 0 ? report.next : await earliestScheduledFire(deps.db, round);
    const untilEarliest = earliest ? Math.max(0, earliest.getTime() - current().getTime()) : SCHEDULER_MAX_SLEEP_MS;
    return Math.min(untilEarliest, round.length ? QUEUED_RECHECK_MS : SCHEDULER_MAX_SLEEP_MS);
  });
  return { stop: () => loop.stop() };
}
