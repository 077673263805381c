import { Cron } from 'croner';

// Daylight saving where croner alone departs from what cron users expect (DESIGN.md "Triggers").
// The spring-forward gap: croner moves a lone skipped time (`30 2 * * *`) to the end of the gap,
// but drops a night where several skipped times match (`0,30 2 * * *`, `15,45 2 * * *`) and the
// skipped one of a range (`30 1-3 * * *`); each such night fires once, at the first valid time
// (fixed-time patterns only, below: a wildcard one fires by real time, cron-schedule.ts).
// The fall-back repeat: croner fires `30 2 * * *` once but `0,30 2` and `30 1-3` at both
// occurrences; a fixed-time pattern (minute and hour fields not starting with `*`, as Vixie cron
// tells them) fires a repeated local time once, at its first occurrence.

const DAY_MS = 86_400_000;
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `ms`, in milliseconds (east positive). */
function offsetMs(timezone: string, ms: number): number {
  let format = offsetFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
    offsetFormats.set(timezone, format);
  }
  const name = format.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(name);
  if (!m) return 0;
  const size = (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)) * 1000;
  return m[1] === '-' ? -size : size;
}

/** The first instant in (lo, hi] whose offset differs from the offset at lo (one change inside). */
function changeAt(timezone: string, lo: number, hi: number): number {
  const before = offsetMs(timezone, lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetMs(timezone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The end of the first spring-forward gap in (after, until] in which the cron matches a skipped
 * local time: the first valid local time after it, when such a night should fire. Null when none.
 * It walks the cron's local (wall-clock) times, not the days: a rare pattern (`0 0 29 2 *`) has
 * one in four years, and walking the days between cost ~3 s of a backfill over 2,000 years.
 */
export function gapFire(cron: string, timezone: string, after: number, until: number): number | null {
  const wallJob = new Cron(cron, { timezone: 'UTC', paused: true });
  // Wall-clock times as UTC instants; a day either side covers any offset change's reach.
  const end = until + offsetMs(timezone, until) + DAY_MS;
  let wall = wallJob.nextRun(new Date(after + offsetMs(timezone, after) - DAY_MS));
  while (wall && wall.getTime() <= end) {
    const at = skippedBy(timezone, wall.getTime());
    if (at !== null && at > after && at <= until) return at;
    if (at !== null && at > until) return null;
    wall = wallJob.nextRun(wall);
  }
  return null;
}

/** The spring-forward change (its instant) whose gap holds the local time `wall` (as a UTC instant); null when the time is not skipped. */
function skippedBy(timezone: string, wall: number): number | null {
  const lo = wall - DAY_MS;
  if (offsetMs(timezone, lo) >= offsetMs(timezone, wall + DAY_MS)) return null;
  const at = changeAt(timezone, lo, wall + DAY_MS);
  const [from, to] = [offsetMs(timezone, at - 1), offsetMs(timezone, at)];
  return to > from && wall >= at + from && wall < at + to ? at : null;
}

/** Whether the cron names fixed local times (its minute and hour fields do not start with `*`): those fire a repeated local time once. */
export function isFixedTime(cron: string): boolean {
  const fields = cron.trim().split(/\s+/);
  if (fields.length === 1) return ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight'].includes(fields[0]);
  const [minute, hour] = fields.length === 6 ? [fields[1], fields[2]] : [fields[0], fields[1]];
  return !minute.startsWith('*') && !hour.startsWith('*');
}

/** Whether `ms` is the second occurrence of its local time (the hour a fall-back change repeats). */
export function isRepeatedLocalTime(timezone: string, ms: number): boolean {
  const lo = ms - DAY_MS;
  if (offsetMs(timezone, lo) === offsetMs(timezone, ms)) return false;
  const at = changeAt(timezone, lo, ms);
  const size = offsetMs(timezone, at - 1) - offsetMs(timezone, at);
  return size > 0 && ms < at + size;
}
