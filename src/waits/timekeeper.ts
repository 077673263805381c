import type { EngineDeps } from '../../actors/engine-deps.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { EVENT } from '../../machines/event-types.ts';
import { lookAtWaits, type DueWait } from '../db/wait.repo.ts';
import type { RoutedEvent } from '../protocol.ts';
import type { WaitClock } from './wait-clock.ts';
import { clockedLoop } from '../periodic/clocked-loop.ts';

// The timekeeper of waits (DESIGN.md "Waiting and control"): it sleeps until the earliest wake-up
// time in core.wait (at most TIMEKEEPER_MAX_SLEEP_MS, so a wait written by another server is seen
// soon; this server's own routings nudge it through the WaitClock), then routes `timer.fired` or
// `wait.timed_out` for what is due, WAITS_PER_UNIT executions per unit of work, two units at once. Every server runs
// one. The routing decides exactly once: its write is guarded on each execution's last event, and
// a wait another server ended first is found over and appended nothing (route-events.ts).

/** Longest sleep between looks at core.wait. */
export const TIMEKEEPER_MAX_SLEEP_MS = 1000;
/** Waits fired per unit of work (one read, one write statement). */
export const WAITS_PER_UNIT = 500;
/** Units routed at once: one folds while another's statement runs in PostgreSQL. */
const UNITS_IN_FLIGHT = 2;
/** Waits taken per look: more are taken at once after. */
export const WAITS_PER_LOOK = WAITS_PER_UNIT * UNITS_IN_FLIGHT;

/**
 * `next`: the earliest wake-up after the due waits taken (null: none), as the look read it;
 * `nextInMs`: how far ahead it was then by the database's clock.
 */
export type FireReport = { due: number; fired: number; moot: number; next: Date | null; nextInMs: number | null };

/**
 * Routes the waits due now (earliest first, at most WAITS_PER_LOOK), in units of WAITS_PER_UNIT
 * routed side by side, each execution's waits in one unit (units never touch one execution);
 * `due` < WAITS_PER_LOOK when none is left. One statement reads them and the next wake-up.
 */
export async function fireDueWaits(deps: EngineDeps, limit = WAITS_PER_LOOK): Promise<FireReport> {
  const sentMs = Date.now();
  const { due, next, nextInMs, nowMs } = await lookAtWaits(deps.db, limit);
  // The waits this server writes count from the database's clock, which fires them (wait-clock.ts).
  deps.waitClock?.heardDatabase(nowMs, sentMs, Date.now());
  if (!due.length) return { due: 0, fired: 0, moot: 0, next, nextInMs };
  const units = Math.min(UNITS_IN_FLIGHT, Math.ceil(due.length / WAITS_PER_UNIT));
  const parts: DueWait[][] = Array.from({ length: units }, () => []);
  for (const w of due) parts[w.execution_id % units].push(w);
  const fired = (await Promise.all(parts.map((part) => fireUnit(deps, part)))).reduce((a, b) => a + b, 0);
  return { due: due.length, fired, moot: due.length - fired, next, nextInMs };
}

/** Routes one unit's timer.fired / wait.timed_out events; returns how many were appended. */
async function fireUnit(deps: EngineDeps, due: readonly DueWait[]): Promise<number> {
  if (!due.length) return 0;
  const events: RoutedEvent[] = due.map((w) => ({
    execution_id: w.execution_id,
    event_type: w.kind === 'timer' ? EVENT.timerFired : EVENT.waitTimedOut,
    step: w.step,
    context: { seq: w.seq, wake_at: w.wake_at.toISOString() },
  }));
  // A wake-up found not to apply (the wait over, the execution paused: route-report.ts) writes
  // nothing, so no write guard would find this server's memory of the execution stale: one it
  // remembers at another event than the look read (another server moved it: began this wait,
  // resumed it) is read afresh, or its wait would stay moot here for as long as that memory.
  const remembered = deps.snapshots.versions(due.map((w) => w.execution_id));
  const stale = due.filter((w) => (remembered.get(w.execution_id) ?? w.last_event_id) !== w.last_event_id).map((w) => w.execution_id);
  const { results } = await routeEvents(deps, events, stale.length ? { wake: stale } : {});
  // A wake-up is a time on the database's clock: its lateness is counted on that clock too.
  const now = deps.waitClock?.databaseNow() ?? Date.now();
  let fired = 0;
  results.forEach((r, i) => {
    if (r.event_id === null) return;
    fired++;
    deps.metrics.waitsFired.inc({ kind: due[i].kind });
    deps.metrics.waitFireLateness.observe(Math.max(0, now - due[i].wake_at.getTime()) / 1000);
  });
  return fired;
}

/** Starts this server's timekeeper; `clock` carries wake-ups sooner than its sleep. */
export function startTimekeeper(deps: EngineDeps, clock: WaitClock): { stop(): Promise<void> } {
  return clockedLoop(deps.log, 'firing due waits', clock, TIMEKEEPER_MAX_SLEEP_MS, async () => {
    const report = await fireDueWaits(deps);
    if (report.due >= WAITS_PER_LOOK) return 0;
    // Read with the due waits: a wait the firing just wrote nudged the clock (publishCommitted).
    // Counted by the database's clock, which decides what is due, not this server's: one running
    // ahead of it would wake before the wait is due and look again at once until it is.
    return report.nextInMs !== null ? Math.max(1, report.nextInMs) : TIMEKEEPER_MAX_SLEEP_MS;
  });
}
