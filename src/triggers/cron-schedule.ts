import { Cron } from 'croner';
import { gapFire, isFixedTime, isRepeatedLocalTime } from './dst-gap.ts';

// Schedule arithmetic over croner (a maintained cron library with IANA timezones): five fields,
// six with seconds first, or an @alias. Daylight saving as cron users expect (croner's rules,
// tested in test/unit/triggers/cron-schedule.test.ts): for a fixed-time pattern, a local time the
// clocks skip fires once at the next valid time (02:30 on a spring-forward night fires at 03:00;
// dst-gap.ts where croner alone drops such a night) and a local time they repeat fires once (at
// its first occurrence); wildcard patterns (`*/15 * * * *`, `30 * * * *`) fire by real time.

const ALIASES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
// IANA names start with a letter (`UTC`, `Europe/Berlin`, `Etc/GMT-5`). Intl also takes UTC offsets
// (`+05:00`, `-0500`, with a Unicode minus too), which are no timezone: DESIGN.md says IANA.
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
const UTC_OFFSET = /^[+\-\u2212]\d/;

/** Why `cron` in `timezone` is no schedule (undefined when it is one), in words for a person. */
export function cronProblem(cron: string, timezone: string): { field: 'cron' | 'timezone'; message: string } | undefined {
  if (UTC_OFFSET.test(timezone.trim())) {
    return { field: 'timezone', message: `'${timezone}' is a UTC offset, not an IANA timezone: use a name such as UTC or Europe/Berlin (a fixed offset is Etc/GMT-5 for +05:00, the sign inverted)` };
  }
  if (!isTimezone(timezone)) return { field: 'timezone', message: `unknown timezone '${timezone}': use an IANA name such as UTC or Europe/Berlin` };
  const text = cron.trim();
  if (text.startsWith('@')) {
    if (!ALIASES.has(text.toLowerCase())) return { field: 'cron', message: `unknown alias '${text}': use one of ${[...ALIASES].join(', ')}` };
  } else {
    const fields = text.split(/\s+/).length;
    if (fields !== 5 && fields !== 6) return { field: 'cron', message: `'${cron}' has ${fields} fields: a schedule has five (minute hour day month weekday), or six with seconds first` };
  }
  const range = text.startsWith('@') ? undefined : rangeProblem(text.split(/\s+/));
  if (range) return { field: 'cron', message: `'${cron}' is not a cron expression: ${range}` };
  try {
    const next = cronOf(text, timezone).nextRun(new Date());
    if (!next) return { field: 'cron', message: `'${cron}' never fires` };
  } catch (err) {
    return { field: 'cron', message: `'${cron}' is not a cron expression: ${err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err)}` };
  }
  return undefined;
}

// Each field's name and range, as written (five fields; six put seconds first).
const FIELDS: readonly (readonly [string, number, number])[] = [['minute', 0, 59], ['hour', 0, 23], ['day', 1, 31], ['month', 1, 12], ['weekday', 0, 7]];
const SECONDS = ['second', 0, 59] as const;

/**
 * A number out of its field's range, said as written: croner says it after its own offsets
 * (`0 0 * 13 *` as "month: 12", `0 0 0 * *` as "day: -1"), which names a value nobody wrote.
 * Only plain numbers and ranges are checked (a step, `L`, `W`, `#n` and names are croner's).
 */
function rangeProblem(fields: readonly string[]): string | undefined {
  const specs = fields.length === 6 ? [SECONDS, ...FIELDS] : FIELDS;
  for (const [i, field] of fields.entries()) {
    const [name, min, max] = specs[i];
    for (const item of field.split(',')) {
      const base = item.split('/')[0];
      if (!/^\d+(?:-\d+)?$/.test(base)) continue;
      for (const n of base.split('-').map(Number)) if (n < min || n > max) return `${name} ${n} is out of range (${min}-${max})`;
    }
  }
  return undefined;
}

/** Whether `name` is an IANA timezone this runtime knows (a UTC offset such as `+05:00` is not). */
export function isTimezone(name: string): boolean {
  if (!IANA_NAME.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The schedule's first fire strictly after `after`; null when it never fires again. */
export function nextFire(cron: string, timezone: string, after: Date): Date | null {
  return nextOf(cronOf(cron.trim(), timezone), cron.trim(), timezone, after);
}

/** croner's next run, or the end of a skipped-time gap before it whose local times match (dst-gap.ts). */
function nextOf(job: Cron, cron: string, timezone: string, after: Date): Date | null {
  let next = job.nextRun(after);
  // A fixed-time pattern fired the repeated local times at their first occurrence: not again.
  const fixed = isFixedTime(cron);
  if (fixed) while (next && isRepeatedLocalTime(timezone, next.getTime())) next = job.nextRun(next);
  if (!next) return null;
  // Only a fixed-time pattern fires a skipped local time at the gap's end: a wildcard one (`30 * * * *`)
  // fires by real time, and its next match after the gap (03:30) would follow a gap fire (03:00) at once.
  const gap = fixed ? gapFire(cron, timezone, after.getTime(), next.getTime() - 1) : null;
  return gap === null ? next : new Date(gap);
}

/**
 * The schedule's fires `t` with `from <= t < to`, oldest first, at most `max` (the oldest ones):
 * a backfill's range, or what a tick finds due.
 */
export function firesBetween(cron: string, timezone: string, from: Date, to: Date, max: number): Date[] {
  const cronJob = cronOf(cron.trim(), timezone);
  const out: Date[] = [];
  // nextRun is strictly after its argument: start a millisecond before `from` to include it.
  let at: Date | null = new Date(from.getTime() - 1);
  while (out.length < max) {
    at = nextOf(cronJob, cron.trim(), timezone, at);
    if (!at || at.getTime() >= to.getTime()) break;
    out.push(at);
  }
  return out;
}

function cronOf(cron: string, timezone: string): Cron {
  // paused: only the arithmetic is used; croner's own timers never run (one timekeeper: scheduler.ts).
  return new Cron(cron, { timezone, paused: true });
}

/** The schedule's latest `n` fires `t` with `t <= until`, oldest first (what downtime missed, without walking it all). */
export function latestFires(cron: string, timezone: string, until: Date, n: number): Date[] {
  if (n <= 0) return [];
  const job = cronOf(cron.trim(), timezone);
  // croner's runs neither skip a repeated local time nor see a night of skipped ones (nextOf): walk
  // forward from the oldest of them, reaching further back while the walk finds fewer than n.
  for (let k = n; ; k *= 2) {
    // previousRuns is strictly before its reference: a millisecond after `until` includes it.
    const runs = job.previousRuns(k, new Date(until.getTime() + 1)).filter((t) => t.getTime() <= until.getTime());
    if (runs.length === 0) return [];
    const oldest = new Date(Math.min(...runs.map((t) => t.getTime())));
    const walked = firesBetween(cron, timezone, oldest, new Date(until.getTime() + 1), 2 * k + 2);
    if (walked.length >= n || runs.length < k || k >= 64 * n) return walked.slice(-n);
  }
}
