import { isCalendarDate, isoTimeInRange } from '../calendar-time.ts';

// What a timer's `until` may be once rendered (docs/playbook-dsl.md "Waiting"): the machine reads
// the rendered value with it, and registration reads a literal `until` (no template) with it, so
// a literal that no run could wait for is refused there instead of failing every run (wait_until).

// An ISO 8601 date-time with its offset (T or a space; minutes, seconds and a fraction as
// clients write them). Only this shape is handed to Date.parse: it reads many others too, and
// some wrongly for their writer (`01.02.2026 10:00 +01:00`, 1 February, as 2 January; `12 Z` as
// 2001-12-01), so a wait would wake at a time nobody asked for instead of failing (wait_until).
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An ISO 8601 time with its offset (on a real day), or epoch milliseconds, as ISO text, in the
 * years 0001 to 9999 (what the wait's row stores); null for anything else.
 */
export function waitTimeOf(value: unknown): string | null {
  if (typeof value === 'number') return isoTimeInRange(value);
  // A time without an offset would be read in the server's own zone: refused, not guessed; and
  // the day must be a real one (JavaScript rolls 02-30 over).
  const text = typeof value === 'string' ? value.trim() : '';
  if (!ISO_TIME.test(text) || !isCalendarDate(text)) return null;
  return isoTimeInRange(Date.parse(text));
}
