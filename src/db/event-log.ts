import { EVENT } from '../../machines/event-types.ts';
import type { EventRow, ExecutionStatus } from './execution.repo.ts';
import { LIVE_EXECUTION_SQL, TERMINAL_EXECUTION_SQL } from './sql-list.ts';


/**
 * The one writer of `core.event`: "append these events to execution X", id allocation included,
 * as CTEs every statement that appends embeds (the unit write, batch markers and records). Each
 * execution's row is updated once: `last_event_id` moves on by the number of events appended,
 * and the events take the ids in between, in their `ord` order, from the value the UPDATE
 * returns. So an event is never inserted before its execution's row is locked, and ids have no
 * gap and no second source.
 *
 * An append is guarded (`expected` not null: the row must still be at that `last_event_id`, the
 * optimistic writer's check; the caller counts `log_bump` rows with `guarded` to fail the
 * statement) or unguarded (an inbox event for an execution outside the unit, a record: it goes
 * after whatever is there). `applied`: `all` (the writer folded every event: applied follows
 * last), `keep` (inbox events: left to the target's next routing), `caught_up` (records that
 * fold to nothing: applied when nothing else was waiting) or `marker` (a batch's acceptance: its
 * first id is a marker that folds to nothing, applied when nothing else was waiting; the rest are
 * ids reserved for items routed later). With `proj` the row's projection (status, progress,
 * result, error, snapshot) is set too.
 *
 * An event with an explicit `event_id` takes that id: one reserved by an earlier append (a batch
 * item routed later, src/db/batch-accept.repo.ts). `n` counts only the events without one (and,
 * for a reservation, the reserved ids).
 */
export type LogAppend = {
  execution_id: number;
  expected: number | null;
  n: number;
  applied: 'all' | 'keep' | 'caught_up' | 'marker';
  proj: boolean;
  status: string | null;
  progress: number | null;
  result: unknown;
  error: unknown;
  /** With `snapshot_event_id` not null: the stored snapshot is replaced. */
  snapshot: unknown;
  machine_version: number | null;
  snapshot_event_id: number | null;
};

/** An event to append: `ord` is its place (1..n) among its execution's events of the statement. */
export type LogEvent = Pick<EventRow, 'execution_id' | 'event_type' | 'step' | 'command_id' | 'worker_id' | 'context' | 'result' | 'error'> & {
  ord: number;
  /** Null: the execution's status after the append (an inbox `execution.cancelled` of a running one: cancelled). */
  status: ExecutionStatus | null;
  /** A `command.issued` event: the id of the command the statement inserts with this seq is joined in. */
  issued_seq: number | null;
  /** Set: the id reserved for it (`ord` is then ignored and the event is not counted in `n`). */
  event_id?: number | null;
};

/** Columns of a relation of appends (a jsonb_to_recordset or a CTE of the caller's). */
export const LOG_APPEND_COLUMNS = `execution_id bigint, expected bigint, n int, applied text, proj boolean, status text, progress numeric,
  result jsonb, error jsonb, snapshot jsonb, machine_version int, snapshot_event_id bigint`;

/** Columns of a relation of events. */
export const LOG_EVENT_COLUMNS = `execution_id bigint, ord int, event_type text, status text, step text, command_id bigint, worker_id text,
  context jsonb, result jsonb, error jsonb, issued_seq int, event_id bigint`;

/**
 * Relations an append reads: `appends` and `events` (relations with the columns above), `ids` (a
 * bigint[] expression holding the appended executions' ids, so the rows are reached by their key
 * in a generic plan), `created` (optional: a relation `(execution_id, catalog_id, status)` of
 * executions inserted by the same statement, whose events start at 1) and `issued` (optional:
 * the statement's inserted commands `(command_id, execution_id, seq)` for `issued_seq`).
 */
export type LogSources = { appends: string; events: string; ids: string; created?: string; issued?: string };

/**
 * The append as CTEs `log_bump` (the rows moved on; `guarded` marks checked ones) and `log_ev`
 * (the events inserted, returning execution_id and event_id), to put in a WITH list.
 */
export function eventLogCtes(s: LogSources): string[] {
  const created = s.created ? `\n    UNION ALL SELECT n.execution_id, n.catalog_id, n.status, 0::bigint FROM ${s.created} n` : '';
  const [commandId, context, join] = s.issued
    ? [
        'COALESCE(v.command_id, c.command_id)',
        `CASE WHEN c.command_id IS NULL THEN v.context ELSE COALESCE(v.context, '{}'::jsonb) || jsonb_build_object('command_id', c.command_id) END`,
        `\n    LEFT JOIN ${s.issued} c ON v.issued_seq IS NOT NULL AND c.execution_id = v.execution_id AND c.seq = v.issued_seq`,
      ]
    : ['v.command_id', 'v.context', ''];
  return [
    `log_bump AS (
  UPDATE core.execution e
     SET last_event_id = e.last_event_id + x.n,
         applied_event_id = CASE x.applied WHEN 'all' THEN e.last_event_id + x.n
                                 WHEN 'caught_up' THEN CASE WHEN e.applied_event_id = e.last_event_id THEN e.applied_event_id + x.n ELSE e.applied_event_id END
                                 WHEN 'marker' THEN CASE WHEN e.applied_event_id = e.last_event_id THEN e.applied_event_id + 1 ELSE e.applied_event_id END
                                 ELSE e.applied_event_id END,
         status = CASE WHEN x.proj THEN x.status ELSE e.status END,
         progress = CASE WHEN x.proj THEN x.progress ELSE e.progress END,
         result = CASE WHEN x.proj THEN x.result ELSE e.result END,
         error = CASE WHEN x.proj THEN x.error ELSE e.error END,
         snapshot = CASE WHEN x.proj AND x.snapshot_event_id IS NOT NULL THEN x.snapshot ELSE e.snapshot END,
         machine_version = CASE WHEN x.proj AND x.snapshot_event_id IS NOT NULL THEN x.machine_version ELSE e.machine_version END,
         snapshot_event_id = CASE WHEN x.proj THEN COALESCE(x.snapshot_event_id, e.snapshot_event_id) ELSE e.snapshot_event_id END,
         updated_at = CASE WHEN x.proj THEN now() ELSE e.updated_at END,
         finished_at = CASE WHEN x.proj AND x.status IN ${TERMINAL_EXECUTION_SQL} AND e.finished_at IS NULL THEN now() ELSE e.finished_at END
    FROM ${s.appends} x
   WHERE e.execution_id = x.execution_id AND e.execution_id = ANY(${s.ids}) AND (x.expected IS NULL OR e.last_event_id = x.expected)
  RETURNING e.execution_id, e.catalog_id, e.status, e.last_event_id - x.n AS from_event_id, e.last_event_id AS to_event_id,
            e.applied_event_id = e.last_event_id AS applied, x.expected IS NOT NULL AS guarded)`,
    `log_ev AS (
  INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error)
  SELECT v.execution_id, COALESCE(v.event_id, b.from_event_id + v.ord), b.catalog_id, v.event_type,
         COALESCE(v.status, CASE WHEN v.event_type = '${EVENT.executionCancelled}' AND b.status IN ${LIVE_EXECUTION_SQL} THEN 'cancelled' ELSE b.status END),
         v.step, ${commandId}, v.worker_id, ${context}, v.result, v.error
    FROM ${s.events} v
    JOIN (SELECT execution_id, catalog_id, status, from_event_id FROM log_bump${created}) b ON b.execution_id = v.execution_id${join}
  RETURNING execution_id, event_id)`,
  ];
}

/**
 * A relation of appends for records that fold to nothing (batch.accepted, .completed, .failed)
 * from a relation `(execution_id, n)`: unguarded, counted as applied when nothing else waited
 * (`marker`: only the first, the others being ids reserved for a batch's items), or left to the
 * execution's next routing (`keep`: inbox events, src/db/inbox-cancels.repo.ts).
 */
export function recordAppends(per: string, applied: 'caught_up' | 'marker' | 'keep' = 'caught_up'): string {
  return `(SELECT execution_id, NULL::bigint AS expected, n, '${applied}'::text AS applied, false AS proj, NULL::text AS status,
          NULL::numeric AS progress, NULL::jsonb AS result, NULL::jsonb AS error, NULL::jsonb AS snapshot, NULL::int AS machine_version,
          NULL::bigint AS snapshot_event_id FROM ${per})`;
}
