import * as v from 'valibot';
import { table } from './api-command.ts';
import { durationText } from './logs-view.ts';
import { whenText } from './triggers-table.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { middleCut } from './text-width.ts';

// The PATH column's widest: paths may hold 512 characters, and one pushed every row's status off the screen.
const PATH_COLUMNS = 60;

// GET /api/executions as `svc list` reads it (fields it does not show are kept: `--json` prints
// the answer whole), and the table it prints of it. Statuses are read as text: a newer server may
// answer one this client does not know, and a listing should still show it.

/** One execution of the listing (the detail's shape less its retry links and waits). */
export const ExecutionItem = v.looseObject({
  execution_id: v.number(),
  path: v.string(),
  status: v.string(),
  progress: v.number(),
  started_at: v.string(),
  finished_at: v.nullable(v.string()),
  // Absent from a server older than it: its run time is then read from the start.
  admitted_at: v.optional(v.nullable(v.string())),
});
/** GET /api/executions's answer. */
export const ExecutionList = v.looseObject({
  executions: v.array(ExecutionItem),
  count: v.number(),
  next_cursor: v.nullable(v.string()),
  counts: ownKeysRecord(v.string(), v.number()),
});

export type ExecutionItem = v.InferOutput<typeof ExecutionItem>;

/** From `since` to `finishedAt`, or to now (`so far`) while it has not finished; `-` when a time is unreadable. */
export function spanText(since: string, finishedAt: string | null, now: number): string {
  const start = Date.parse(since);
  const end = finishedAt === null ? now : Date.parse(finishedAt);
  if (Number.isNaN(start) || Number.isNaN(end)) return '-';
  return `${durationText(Math.max(0, end - start))}${finishedAt === null ? ' so far' : ''}`;
}

/**
 * How long it ran: from its admission (its start when flow control never queued it) to its end,
 * or to now; the time it waited queued is no run time. Still queued: `queued` and for how long.
 */
export function runTimeText(item: Pick<ExecutionItem, 'status' | 'started_at' | 'finished_at' | 'admitted_at'>, now: number): string {
  if (item.status === 'queued') {
    const since = Date.parse(item.started_at);
    return Number.isNaN(since) ? 'queued' : `queued ${durationText(Math.max(0, now - since))}`;
  }
  return spanText(item.admitted_at ?? item.started_at, item.finished_at, now);
}

/** The listing as a table: id, path (a long one cut in its middle), status, start (and its age), run time, progress. */
export function executionsTable(executions: readonly ExecutionItem[], now = Date.now()): string {
  return table([
    ['ID', 'PATH', 'STATUS', 'STARTED', 'RUN TIME', 'PROGRESS'],
    ...executions.map((e) => [String(e.execution_id), middleCut(e.path, PATH_COLUMNS), e.status, whenText(e.started_at, now), runTimeText(e, now), `${e.progress}%`]),
  ]);
}
