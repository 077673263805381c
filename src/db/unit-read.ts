import { COMMAND_COLUMNS_NO_INPUT } from './command-plans.ts';
import { commandOfJson, type CommandJson, type CommandRow } from './command.repo.ts';
import type { EventRow, ExecutionRow } from './execution.repo.ts';
import type { Queryable } from './queryable.ts';
import { FOLDING_EVENT_TYPES } from '../../machines/event-types.ts';
import { BATCH_PENDING_SQL } from './batch-pending-sql.ts';
import { opaque } from './opaque-param.ts';
import { LIVE_EXECUTION_SQL, sqlList } from './sql-list.ts';

const FOLDING = sqlList(FOLDING_EVENT_TYPES);

/** The items of an accepted batch not routed yet, with the ids reserved for them in its execution's log. */
export type ReservedBatch = { batch_id: number; worker_id: string | null; event_ids: number[]; events: unknown[] };

/** An event the machine already applied, as a fold reads it again (actors/to-machine-event.ts). */
export type AppliedEvent = Pick<EventRow, 'event_id' | 'event_type' | 'context' | 'result' | 'error'>;

/**
 * An execution as hydration reads it: its row; for a running one the events past the snapshot it
 * can use, those it applied (the types that fold, with what a fold reads of them) and those it has
 * not (`inbox`, whole rows); and the batches whose items wait at reserved ids (whatever its status).
 */
export type ReadExecution = ExecutionRow & { applied: AppliedEvent[]; inbox: EventRow[]; reserved: ReservedBatch[] };

const READ_UNIT = {
  name: 'svc_read_unit',
  // Every parameter opaque: planned for its values, this text cost ~1 ms of planning at each call
  // (0.2-0.3 ms to run), and PostgreSQL never settled on its generic plan.
  // One statement (one snapshot of the database): a live execution's events are those its row counts.
  // The inbox is a json column of its own, aggregated as json text (jsonb_agg built each row as
  // jsonb); the applied events are rows (below). The row is json too, and the stored snapshot a
  // column beside it: inside to_jsonb(x) the snapshot was copied node by node (and again by
  // `- 'hot'`): that was 3 times the rest of the read. The executions are a CTE: both read them.
  text: `WITH x AS (
  SELECT e.execution_id, e.catalog_id, e.path, e.parent_execution_id, e.root_execution_id, e.parent_command_id, e.status, e.progress,
         e.result, e.error, e.machine_version, e.snapshot_event_id, e.applied_event_id, e.last_event_id, e.started_at, e.updated_at, e.finished_at,
         h.hot,
         CASE WHEN e.status IN ${LIVE_EXECUTION_SQL} AND NOT h.hot AND e.machine_version = ${opaque('$3', 'int')} THEN e.snapshot END AS snapshot,
         -- Looked for only when something waits (reserved ids are past applied_event_id until routed).
         CASE WHEN e.applied_event_id < e.last_event_id THEN
           (SELECT coalesce(jsonb_agg(jsonb_build_object('batch_id', b.batch_id, 'worker_id', b.worker_id, 'event_ids', b.event_ids, 'events', b.events)
                                      ORDER BY b.batch_id), '[]')
              FROM core.batch_request b
             WHERE b.execution_id = e.execution_id AND b.state IN (${BATCH_PENDING_SQL}) AND b.event_ids[1] > e.applied_event_id)
         ELSE '[]' END AS reserved
    FROM core.execution e
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM unnest(${opaque('$4', 'bigint[]')}, ${opaque('$5', 'bigint[]')}) AS c(id, last)
                                        WHERE c.id = e.execution_id AND c.last = e.last_event_id) AS hot) h
   WHERE e.execution_id = ANY(${opaque('$1', 'bigint[]')}))
SELECT 'execution' AS kind, to_json(r) AS row, x.snapshot,
       -- x.snapshot is the stored one where it is of this machine version (else null: the whole log).
       CASE WHEN x.status IN ${LIVE_EXECUTION_SQL} AND NOT x.hot AND x.applied_event_id < x.last_event_id THEN
         (SELECT coalesce(json_agg(v ORDER BY v.event_id), '[]') FROM core.event v
           WHERE v.execution_id = x.execution_id AND v.event_id > x.applied_event_id AND v.event_id <= x.last_event_id
             AND v.event_id > CASE WHEN x.snapshot IS NOT NULL THEN x.snapshot_event_id ELSE 0 END)
       ELSE '[]' END AS inbox,
       NULL::bigint AS execution_id, NULL::bigint AS event_id, NULL::text AS event_type, NULL::jsonb AS context, NULL::jsonb AS result, NULL::jsonb AS error
  FROM x
  CROSS JOIN LATERAL (SELECT x.execution_id, x.catalog_id, x.path, x.parent_execution_id, x.root_execution_id, x.parent_command_id, x.status, x.progress,
                             x.result, x.error, x.machine_version, x.snapshot_event_id, x.applied_event_id, x.last_event_id, x.started_at, x.updated_at,
                             x.finished_at, x.reserved) r
UNION ALL
-- Events the machine applied are read to be folded again, so only the types that fold (most of a
-- log only records: a loop item is 1 folding event of 6) and only what a fold reads, a row each:
-- the client parses rows as they arrive, while PostgreSQL reads on (one aggregate of a 10,000-event
-- log's 1,666 folding events cost twice the server's time and was parsed only once it was whole).
-- The subquery's ORDER BY keeps it a scan of the primary key per execution, in id order.
SELECT 'applied', NULL, NULL, NULL, v.execution_id, v.event_id, v.event_type, v.context, v.result, v.error
  FROM x
  CROSS JOIN LATERAL (SELECT v.execution_id, v.event_id, v.event_type, v.context, v.result, v.error FROM core.event v
                       WHERE v.execution_id = x.execution_id AND v.event_id <= x.applied_event_id
                         AND v.event_id > CASE WHEN x.snapshot IS NOT NULL THEN x.snapshot_event_id ELSE 0 END
                         AND v.event_type IN ${FOLDING}
                       ORDER BY v.event_id) v
 WHERE x.status IN ${LIVE_EXECUTION_SQL} AND NOT x.hot
UNION ALL
SELECT 'command', to_json(c), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM (
  -- Each by its (command, execution) pair, so by its execution too (one shard under Citus); the id
  -- array reaches the rows by their primary key.
  SELECT ${COMMAND_COLUMNS_NO_INPUT} FROM unnest(${opaque('$2', 'bigint[]')}, ${opaque('$6', 'bigint[]')}) AS r(cid, eid)
    JOIN core.command ON command_id = r.cid AND execution_id = r.eid
   WHERE command_id = ANY(${opaque('$2', 'bigint[]')})) c`,
};

/** A row of READ_UNIT: an execution, one of the events it applied, or a command. */
type ReadRow =
  | { kind: 'execution'; row: Json<Omit<ReadExecution, 'snapshot' | 'applied' | 'inbox'>> | CommandJson; snapshot: ExecutionRow['snapshot']; inbox: EventRow[] | null }
  | ({ kind: 'applied'; execution_id: number } & AppliedEvent)
  | { kind: 'command'; row: Json<Omit<ReadExecution, 'snapshot' | 'applied' | 'inbox'>> | CommandJson };

/** The events by id (rows of a UNION come in no order SQL promises; they come sorted, and are then left as they are). */
function inIdOrder(events: AppliedEvent[]): AppliedEvent[] {
  for (let i = 1; i < events.length; i++) if (events[i - 1].event_id > events[i].event_id) return events.sort((a, b) => a.event_id - b.event_id);
  return events;
}

/** A command named with the execution it was reported for (a report's event names both). */
export type CommandRef = { execution_id: number; command_id: number };

type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/**
 * What hydration reads of the executions and commands it does not hold in memory, in ONE
 * statement and without locks (the write's guard on `last_event_id` stands for them): each
 * execution's row with, when running, its stored snapshot (when of `machineVersion`) and the
 * events after it up to `last_event_id` (of those up to `applied_event_id`, only the types that
 * fold and only what a fold reads: the rest are records the fold skips), and the accepted batches whose items are not routed yet
 * (their ids lie between `applied_event_id` and `last_event_id`, so nothing routes past them);
 * and the reported commands' rows (without their input), each read by its command and the
 * execution it was reported for: a command named with another execution is not found.
 * `hot` maps ids to the `last_event_id` of a snapshot held in memory: a row still there sends
 * neither snapshot nor events.
 */
export async function readUnit(
  q: Queryable,
  executionIds: readonly number[],
  commands: readonly CommandRef[],
  hot: ReadonlyMap<number, number>,
  machineVersion: number,
): Promise<{ executions: ReadExecution[]; commands: CommandRow[] }> {
  if (!executionIds.length && !commands.length) return { executions: [], commands: [] };
  const pairs = [...new Map(commands.map((c) => [`${c.execution_id}:${c.command_id}`, c])).values()];
  const { rows } = await q.query<ReadRow>({
    ...READ_UNIT,
    values: [[...new Set(executionIds)], pairs.map((c) => c.command_id), machineVersion, [...hot.keys()], [...hot.values()], pairs.map((c) => c.execution_id)],
  });
  const executions: ReadExecution[] = [];
  const read: CommandRow[] = [];
  const applied = new Map<number, AppliedEvent[]>();
  for (const r of rows) {
    if (r.kind === 'applied') {
      const list = applied.get(r.execution_id);
      const event = { event_id: r.event_id, event_type: r.event_type, context: r.context, result: r.result, error: r.error };
      if (list) list.push(event);
      else applied.set(r.execution_id, [event]);
    } else if (r.kind === 'execution' && r.inbox !== null && 'reserved' in r.row) {
      const { row, snapshot, inbox } = r;
      executions.push({ ...row, snapshot, applied: [], inbox, started_at: new Date(row.started_at), updated_at: new Date(row.updated_at), finished_at: row.finished_at === null ? null : new Date(row.finished_at) });
    } else if (r.kind === 'command' && 'seq' in r.row) {
      read.push(commandOfJson(r.row));
    }
  }
  for (const x of executions) x.applied = inIdOrder(applied.get(x.execution_id) ?? []);
  return { executions, commands: read };
}
