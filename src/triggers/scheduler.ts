import type { EngineDeps } from '../../actors/engine-deps.ts';
import { cancelExecution } from '../engine/cancel-execution.ts';
import { dueSchedules, earliestScheduledFire, unfinishedRunsOf, type TriggerRow } from '../db/trigger.repo.ts';
import { firesBetween, latestFires, nextFire } from './cron-schedule.ts';
import { fireTrigger, renderTriggerPayload, TickRaced, type Fire } from './fire-trigger.ts';
import { ScheduleTriggerSchema, type ScheduleTrigger } from './trigger.schema.ts';
import * as v from 'valibot';

// The timekeeper of schedules: it sleeps until the earliest next fire of any schedule (at most
// SCHEDULER_MAX_SLEEP_MS, so a schedule registered on another server is seen soon), then fires
// what is due. Every server runs one; a tick takes a schedule's row (FOR UPDATE SKIP LOCKED) and
// moves its next fire time in the transaction that starts the fires, and each fire's key is
// unique, so two servers never fire one time twice and a crash mid-tick loses nothing: the row
// still says the time is due.

/** Longest sleep between looks at the schedules. */
export const SCHEDULER_MAX_SLEEP_MS = 1000;
/** A due time later than this at its tick was missed (downtime): the catch-up policy decides. */
export const MISFIRE_GRACE_MS = 60_000;
/** A schedule still due after a tick waits for its previous run (overlap `queue`): looked at again after this. */
const QUEUED_RECHECK_MS = 500;
/** Schedules handled per look; more wait for the next, at once. */
const DUE_PER_TICK = 200;
/** Schedules fired at once within a tick (each is its own transaction). */
const TICK_CONCURRENCY = 8;
/** How far back the overlap check looks for unfinished runs of a trigger. */
const OVERLAP_RECENT_RUNS = 10;

export type Clock = () => Date;

/** What one tick did, for tests and logs. */
export type TickReport = { schedules: number; started: number; skipped: number; refused: number; raced: number };

/**
 * Fires every schedule due at `now()`: the catch-up policy picks among the due times, the overlap
 * policy decides what the previous unfinished run means, and each schedule's fires and its next
 * time are written together (fire-trigger.ts). A schedule another server holds is left to it.
 */
export async function runScheduleTick(deps: EngineDeps, now: Clock = () => new Date()): Promise<TickReport> {
  const report: TickReport = { schedules: 0, started: 0, skipped: 0, refused: 0, raced: 0 };
  const due = await dueSchedules(deps.db, now(), DUE_PER_TICK);
  report.schedules = due.length;
  let next = 0;
  const workers = Array.from({ length: Math.min(TICK_CONCURRENCY, due.length) }, async () => {
    while (next < due.length) {
      const row = due[next++];
      try {
        const results = await fireSchedule(deps, row, now);
        for (const r of results) if (!r.duplicate) report[r.outcome === 'started' ? 'started' : r.outcome === 'skipped' ? 'skipped' : 'refused']++;
      } catch (err) {
        if (err instanceof TickRaced) report.raced++;
        else deps.log.warn({ err: err instanceof Error ? err.message : String(err), trigger: `${row.path}/${row.name}` }, 'schedule tick failed; it is tried again at the next tick');
      }
    }
  });
  await Promise.all(workers);
  return report;
}

async function fireSchedule(deps: EngineDeps, row: TriggerRow, now: Clock) {
  const spec = v.parse(ScheduleTriggerSchema, row.spec);
  const from = row.next_fire_at!;
  const at = now();
  const dueTimes = duePick(spec, from, at);
  const ref = { path: row.path, name: row.name, kind: 'schedule' as const };
  const unfinished = spec.overlap === 'allow' ? [] : await unfinishedRunsOf(deps.db, row.path, row.name, OVERLAP_RECENT_RUNS);
  let toStart = dueTimes;
  let skipped: Date[] = [];
  let nextTime = nextFire(spec.cron, spec.timezone, at);
  if (spec.overlap === 'skip') {
    // One run at a time: with one running, every due time is skipped; else the first starts.
    [toStart, skipped] = unfinished.length > 0 ? [[], dueTimes] : [dueTimes.slice(0, 1), dueTimes.slice(1)];
  } else if (spec.overlap === 'queue') {
    // One run at a time, none dropped: the first due time waits (the row stays due) until the run ends.
    if (unfinished.length > 0) return [];
    toStart = dueTimes.slice(0, 1);
    if (dueTimes.length > 1) nextTime = dueTimes[1];
  } else if (spec.overlap === 'cancel_previous') {
    // The newest due time replaces whatever still runs.
    [toStart, skipped] = [dueTimes.slice(-1), dueTimes.slice(0, -1)];
    for (const id of unfinished) await cancelExecution(deps, id, { reason: `trigger ${row.name}: overlap cancel_previous`, trigger: { name: row.name, kind: 'schedule' } });
  }
  const firedAt = new Date();
  const fires: Fire[] = [
    ...toStart.map((t): Fire => ({ fireKey: t.toISOString(), scheduledTime: t, ...renderTriggerPayload(spec.payload, { trigger: { name: row.name, kind: 'schedule', scheduled_time: t.toISOString(), fired_at: firedAt.toISOString() } }) })),
    ...skipped.map((t): Fire => ({ fireKey: t.toISOString(), scheduledTime: t, skipped: unfinished.length > 0 ? `overlap ${spec.overlap}: execution ${unfinished.join(', ')} still running` : `overlap ${spec.overlap}: one run per tick` })),
  ];
  const results = await fireTrigger(deps, ref, fires, { from, to: nextTime });
  const committed = Date.now();
  for (const [i, r] of results.entries()) {
    if (r.outcome === 'started' && !r.duplicate) deps.metrics.triggerFireLateness.observe(Math.max(0, committed - fires[i].scheduledTime!.getTime()) / 1000);
  }
  return results;
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
 * (never longer than SCHEDULER_MAX_SLEEP_MS). `wake()` ends a sleep early (a registration here).
 */
export function startScheduler(deps: EngineDeps, now: Clock = () => new Date()): { stop(): Promise<void>; wake(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
      timer.unref();
    });
  const loop = (async () => {
    while (!stopped) {
      let sleepMs = SCHEDULER_MAX_SLEEP_MS;
      try {
        const report = await runScheduleTick(deps, now);
        if (report.schedules >= DUE_PER_TICK) continue;
        const earliest = await earliestScheduledFire(deps.db);
        const untilEarliest = earliest ? earliest.getTime() - now().getTime() : SCHEDULER_MAX_SLEEP_MS;
        sleepMs = Math.min(SCHEDULER_MAX_SLEEP_MS, untilEarliest <= 0 ? QUEUED_RECHECK_MS : untilEarliest);
      } catch (err) {
        if (stopped) break;
        deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'schedule tick failed');
      }
      if (!stopped) await sleep(sleepMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wakeUp?.();
      await loop;
    },
    wake() {
      clearTimeout(timer);
      wakeUp?.();
    },
  };
}
