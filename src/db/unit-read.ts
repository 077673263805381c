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
  // The events are a json column of their own, aggregated as json text: jsonb_agg built each of a
  // 10,000-event log's rows as jsonb (118-124 ms against 54-66 ms, docs/benchmarks.md). The row
  // is json too, and the stored snapshot a column beside it: inside to_jsonb(x) the snapshot was
  // copied node by node (and again by `- 'hot'`): that was 3 times the rest of the read.
  text: `SELECT 'execution' AS kind, to_json(r) AS row, x.snapshot,
       -- Events the machine applied are read to be folded again, so only the types that fold (most
       -- of a log only records: a loop item is 1 folding event of 6) and only what a fold reads.
       -- x.snapshot is the stored one where it is of this machine version (else null: the whole log).
       CASE WHEN x.status IN ${LIVE_EXECUTION_SQL} AND NOT x.hot THEN
         (SELECT coalesce(json_agg(json_build_object('event_id', v.event_id, 'event_type', v.event_type, 'context', v.context, 'result', v.result,
                                                     'error', v.error) ORDER BY v.event_id), '[]') FROM core.event v
           WHERE v.execution_id = x.execution_id AND v.event_id <= x.applied_event_id
             AND v.event_id > CASE WHEN x.snapshot IS NOT NULL THEN x.snapshot_event_id ELSE 0 END
             AND v.event_type IN ${FOLDING})
       ELSE '[]' END AS applied,
       CASE WHEN x.status IN ${LIVE_EXECUTION_SQL} AND NOT x.hot AND x.applied_event_id < x.last_event_id THEN
         (SELECT coalesce(json_agg(v ORDER BY v.event_id), '[]') FROM core.event v
           WHERE v.execution_id = x.execution_id AND v.event_id > x.applied_event_id AND v.event_id <= x.last_event_id
             AND v.event_id > CASE WHEN x.snapshot IS NOT NULL THEN x.snapshot_event_id ELSE 0 END)
       ELSE '[]' END AS inbox
  FROM (
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
   WHERE e.execution_id = ANY(${opaque('$1', 'bigint[]')})) x
  CROSS JOIN LATERAL (SELECT x.execution_id, x.catalog_id, x.path, x.parent_execution_id, x.root_execution_id, x.parent_command_id, x.status, x.progress,
                             x.result, x.error, x.machine_version, x.snapshot_event_id, x.applied_event_id, x.last_event_id, x.started_at, x.updated_at,
                             x.finished_at, x.reserved) r
UNION ALL
SELECT 'command', to_json(c), NULL, NULL, NULL FROM (
  -- Each by its (command, execution) pair, so by its execution too (one shard under Citus); the id
  -- array reaches the rows by their primary key.
  SELECT ${COMMAND_COLUMNS_NO_INPUT} FROM unnest(${opaque('$2', 'bigint[]')}, ${opaque('$6', 'bigint[]')}) AS r(cid, eid)
    JOIN core.command ON command_id = r.cid AND execution_id = r.eid
   WHERE command_id = ANY(${opaque('$2', 'bigint[]')})) c`,
};

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
  const { rows } = await q.query<{ kind: string; row: Json<Omit<ReadExecution, 'snapshot' | 'applied' | 'inbox'>> | CommandJson; snapshot: ExecutionRow['snapshot']; applied: AppliedEvent[] | null; inbox: EventRow[] | null }>({
    ...READ_UNIT,
    values: [[...new Set(executionIds)], pairs.map((c) => c.command_id), machineVersion, [...hot.keys()], [...hot.values()], pairs.map((c) => c.execution_id)],
  });
  const executions: ReadExecution[] = [];
  const read: CommandRow[] = [];
  for (const { kind, row, snapshot, applied, inbox } of rows) {
    if (kind === 'execution' && applied !== null && inbox !== null && 'reserved' in row) {
      executions.push({ ...row, snapshot, applied, inbox, started_at: new Date(row.started_at), updated_at: new Date(row.updated_at), finished_at: row.finished_at === null ? null : new Date(row.finished_at) });
    } else if (kind === 'command' && 'seq' in row) {
      read.push(commandOfJson(row));
    }
  }
  return { executions, commands: read };
}
