import type { ExecutionListCursor } from '../db/execution.repo.ts';
import { isCalendarDate, isoTimeInRange } from '../calendar-time.ts';

// The list's cursor: the last row's start time (to the microsecond, as PostgreSQL wrote it) and
// id, base64url-encoded. Opaque to clients; a bare execution id is still accepted (older clients).
const STARTED_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const TOKEN = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * Whether a started key is a time PostgreSQL wrote: a real day and clock time (no hour 99, no
 * second 75) in the years 0001 to 9999. Anything else in a cursor was tampered with, and would
 * fail the query.
 */
function isStartTime(key: string): boolean {
  return isCalendarDate(key) && isoTimeInRange(Date.parse(`${key.slice(0, 23)}Z`)) !== null;
}

/** The cursor that continues a list after the row started at `startedKey` with `id`. */
export function encodeExecutionCursor(startedKey: string, id: number): string {
  return Buffer.from(`${startedKey} ${id}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or undefined for text that is no cursor of ours. */
export function decodeExecutionCursor(text: string): ExecutionListCursor | undefined {
  if (/^\d{1,16}$/.test(text)) {
    const afterId = Number(text);
    return afterId >= 1 && Number.isSafeInteger(afterId) ? { afterId } : undefined;
  }
  if (!TOKEN.test(text)) return undefined;
  const [startedAt, idText, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split(' ');
  if (rest.length || startedAt === undefined || idText === undefined) return undefined;
  if (!STARTED_KEY.test(startedAt) || !isStartTime(startedAt) || !/^\d{1,16}$/.test(idText)) return undefined;
  const id = Number(idText);
  return id >= 1 && Number.isSafeInteger(id) ? { startedAt, id } : undefined;
}

