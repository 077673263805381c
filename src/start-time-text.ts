import * as v from 'valibot';
import { isCalendarDate } from './calendar-time.ts';

// The times the execution list is filtered by (GET /api/executions started_after and
// started_before; `svc list --since` and `--until` given as times): one rule for the server and
// the CLI, so that the CLI refuses what the server would, naming its own option.

/** An ISO 8601 date (its UTC midnight) or date-time with a zone, naming a real day. */
export const StartTimeText = v.config(
  v.pipe(
    v.union([v.pipe(v.string(), v.isoTimestamp()), v.pipe(v.string(), v.isoDate())], 'must be an ISO 8601 date or date-time with a zone'),
    v.check(isCalendarDate, 'must name a real day'),
  ),
  // A text that is no date at all is not also told it names no real day.
  { abortPipeEarly: true },
);
