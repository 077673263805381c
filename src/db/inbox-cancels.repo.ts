import { EVENT } from '../../machines/event-types.ts';
import { eventLogCtes, recordAppends } from './event-log.ts';
import type { Queryable } from './queryable.ts';
import { LIVE_EXECUTION_SQL } from './sql-list.ts';

/** An `execution.cancelled` to append to an execution's inbox, with the event's context. */
export type InboxCancel = { executionId: number; context: Record<string, unknown> };

/**
 * Appends `execution.cancelled` to the inbox of each of these executions still live (unguarded,
 * left to the execution's next routing: the caller wakes them after commit, the inbox sweep if it
 * cannot), in the caller's transaction: so a cancel commits with what it belongs to (a trigger's
 * fire, overlap cancel_previous) or not at all. The rows are locked first, so one that ended
 * meanwhile gets nothing. Answers the executions it appended to.
 */
export async function appendInboxCancels(q: Queryable, cancels: readonly InboxCancel[]): Promise<number[]> {
  // One event per execution: its `ord` is 1.
  const once = [...new Map(cancels.map((c) => [c.executionId, c])).values()];
  if (once.length === 0) return [];
  const ids = once.map((c) => c.executionId);
  const { rows } = await q.query<{ execution_id: number }>(
    `WITH given AS (
       SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(execution_id bigint, context jsonb)
     ), live AS (
       SELECT e.execution_id FROM core.execution e
        WHERE e.execution_id = ANY($1::bigint[]) AND e.status IN ${LIVE_EXECUTION_SQL}
        FOR UPDATE OF e
     ), per AS (
       SELECT execution_id, 1 AS n FROM live
     ), log_events AS (
       SELECT g.execution_id, 1 AS ord, '${EVENT.executionCancelled}'::text AS event_type, NULL::text AS status, NULL::text AS step,
              NULL::bigint AS command_id, NULL::text AS worker_id, g.context,
              NULL::jsonb AS result, NULL::jsonb AS error, NULL::int AS issued_seq, NULL::bigint AS event_id
         FROM given g JOIN live USING (execution_id)
     ), ${eventLogCtes({ appends: recordAppends('per', 'keep'), events: 'log_events', ids: '$1::bigint[]' }).join(', ')}
     SELECT execution_id::float8 AS execution_id FROM log_ev`,
    [ids, JSON.stringify(once.map((c) => ({ execution_id: c.executionId, context: c.context })))],
  );
  return rows.map((r) => r.execution_id);
}
