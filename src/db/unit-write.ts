import type { CommandRow, CommandStatus } from './command.repo.ts';
import type { EventRow, ExecutionStatus } from './execution.repo.ts';
import type { Queryable } from './queryable.ts';

export type UnitExecution = {
  execution_id: number;
  status: ExecutionStatus;
  progress: number;
  result: unknown;
  error: unknown;
  /** Null with a null snapshot_event_id: the stored snapshot stays as it is. */
  snapshot: unknown;
  machine_version: number;
  snapshot_event_id: number | null;
  applied_event_id: number;
  last_event_id: number;
};

export type UnitNewExecution = UnitExecution & {
  catalog_id: number;
  path: string;
  parent_execution_id: number | null;
  root_execution_id: number;
  parent_command_id: number | null;
};

export type UnitCommand = {
  execution_id: number;
  catalog_id: number;
  seq: number;
  step: string;
  loop_index: number | null;
  status: CommandStatus;
  input: unknown;
  /** Set when the command is handed straight to the reporting worker (claim-ahead). */
  worker_id: string | null;
};

/** An event row; `issued_seq` links a `command.issued` event to the command inserted with it. */
export type UnitEvent = EventRow & { issued_seq?: number | null };

export type UnitWrite = {
  newExecutions: UnitNewExecution[];
  executions: UnitExecution[];
  /** Finished executions seen with a late event: only their ids advance. */
  lateAdvances: { execution_id: number; last_event_id: number }[];
  commands: UnitCommand[];
  events: UnitEvent[];
  commandUpdates: { command_id: number; status: CommandStatus }[];
  cancels: { execution_id: number; seq: number }[];
  keychainCleanup: { execution_id: number; is_root: boolean }[];
  /** Also claim older PENDING commands: up to `max` for each of these workers, in order. */
  claimOlder: { workerId: string; max: number }[];
};

const COMMAND_COLUMNS = 'command_id, execution_id, catalog_id, seq, step, loop_index, status, attempt, worker_id, input, claimed_at, heartbeat_at, created_at';
const QUALIFIED_COMMAND_COLUMNS = COMMAND_COLUMNS.split(', ').map((c) => `c.${c}`).join(', ');
const EXEC_FIELDS = `execution_id bigint, status text, progress numeric, result jsonb, error jsonb, snapshot jsonb, machine_version int,
  snapshot_event_id bigint, applied_event_id bigint, last_event_id bigint`;

// One statement for everything a routing transaction writes: each part is a data-modifying CTE
// over a slice of one JSON parameter. Fewer round trips is most of the cost of a step. The id
// arrays ($4..$8) repeat ids from the JSON so the planner reaches rows by index: it cannot see
// how few rows jsonb_to_recordset yields and would otherwise scan whole tables.
const WRITE_SQL = `
WITH p AS (SELECT $1::jsonb AS j),
new_exec AS (
  INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status, progress,
                              result, error, snapshot, machine_version, snapshot_event_id, applied_event_id, last_event_id, finished_at)
  SELECT x.execution_id, x.catalog_id, x.path, x.parent_execution_id, x.root_execution_id, x.parent_command_id, x.status, x.progress,
         x.result, x.error, x.snapshot, x.machine_version, COALESCE(x.snapshot_event_id, 0), x.applied_event_id, x.last_event_id,
         CASE WHEN x.status <> 'running' THEN now() END
    FROM p, jsonb_to_recordset(p.j->'newExecutions') AS x(${EXEC_FIELDS}, catalog_id bigint, path text, parent_execution_id bigint,
         root_execution_id bigint, parent_command_id bigint)
   ORDER BY x.execution_id
  RETURNING execution_id),
cmd AS (
  INSERT INTO core.command (execution_id, catalog_id, seq, step, loop_index, status, input, worker_id, attempt, claimed_at, heartbeat_at)
  SELECT x.execution_id, x.catalog_id, x.seq, x.step, x.loop_index, x.status, x.input, x.worker_id,
         CASE WHEN x.worker_id IS NULL THEN 0 ELSE 1 END,
         CASE WHEN x.worker_id IS NULL THEN NULL ELSE now() END,
         CASE WHEN x.worker_id IS NULL THEN NULL ELSE now() END
    FROM p, jsonb_to_recordset(p.j->'commands') AS x(execution_id bigint, catalog_id bigint, seq int, step text, loop_index int,
         status text, input jsonb, worker_id text)
  RETURNING ${COMMAND_COLUMNS}),
ev AS (
  INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error)
  SELECT x.execution_id, x.event_id, x.catalog_id, x.event_type, x.status, x.step, COALESCE(x.command_id, c.command_id), x.worker_id,
         CASE WHEN c.command_id IS NULL THEN x.context ELSE COALESCE(x.context, '{}'::jsonb) || jsonb_build_object('command_id', c.command_id) END,
         x.result, x.error
    FROM p, jsonb_to_recordset(p.j->'events') AS x(execution_id bigint, event_id bigint, catalog_id bigint, event_type text, status text,
         step text, command_id bigint, worker_id text, context jsonb, result jsonb, error jsonb, issued_seq int)
    LEFT JOIN cmd c ON x.issued_seq IS NOT NULL AND c.execution_id = x.execution_id AND c.seq = x.issued_seq),
upd_exec AS (
  UPDATE core.execution e
     SET status = x.status, progress = x.progress, result = x.result, error = x.error,
         snapshot = CASE WHEN x.snapshot_event_id IS NULL THEN e.snapshot ELSE x.snapshot END,
         machine_version = CASE WHEN x.snapshot_event_id IS NULL THEN e.machine_version ELSE x.machine_version END,
         snapshot_event_id = COALESCE(x.snapshot_event_id, e.snapshot_event_id),
         applied_event_id = x.applied_event_id, last_event_id = x.last_event_id, updated_at = now(),
         finished_at = CASE WHEN x.status <> 'running' AND e.finished_at IS NULL THEN now() ELSE e.finished_at END
    FROM p, jsonb_to_recordset(p.j->'executions') AS x(${EXEC_FIELDS})
   WHERE e.execution_id = x.execution_id AND e.execution_id = ANY($4::bigint[])),
late AS (
  UPDATE core.execution e SET last_event_id = x.last_event_id, applied_event_id = GREATEST(e.applied_event_id, x.last_event_id)
    FROM p, jsonb_to_recordset(p.j->'lateAdvances') AS x(execution_id bigint, last_event_id bigint)
   WHERE e.execution_id = x.execution_id AND e.execution_id = ANY($5::bigint[])),
upd_cmd AS (
  UPDATE core.command c SET status = x.status, updated_at = now(), heartbeat_at = now()
    FROM p, jsonb_to_recordset(p.j->'commandUpdates') AS x(command_id bigint, status text)
   WHERE c.command_id = x.command_id AND c.command_id = ANY($6::bigint[])),
cancel AS (
  UPDATE core.command c SET status = 'CANCELLED', updated_at = now()
    FROM p, jsonb_to_recordset(p.j->'cancels') AS x(execution_id bigint, seq int)
   WHERE c.execution_id = x.execution_id AND c.seq = x.seq AND c.execution_id = ANY($7::bigint[])
     AND c.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')),
kc AS (
  DELETE FROM core.keychain k USING p, jsonb_to_recordset(p.j->'keychainCleanup') AS x(execution_id bigint, is_root boolean)
   WHERE k.execution_id = x.execution_id AND k.execution_id = ANY($8::bigint[])
     AND (k.scope_type = 'local' OR (x.is_root AND k.scope_type = 'shared'))),
older AS (
  UPDATE core.command c
     SET status = 'CLAIMED', worker_id = w.worker_id, attempt = c.attempt + 1, claimed_at = now(), heartbeat_at = now(), updated_at = now()
    FROM (SELECT o.command_id, row_number() OVER (ORDER BY o.command_id) AS rn
            FROM (SELECT o.command_id FROM core.command o
                   WHERE o.status = 'PENDING'
                     AND NOT EXISTS (SELECT 1 FROM p, jsonb_to_recordset(p.j->'cancels') AS x(execution_id bigint, seq int)
                                      WHERE x.execution_id = o.execution_id AND x.seq = o.seq)
                   ORDER BY o.command_id LIMIT $3 FOR UPDATE SKIP LOCKED) o) picked
    JOIN jsonb_to_recordset($2::jsonb) AS w(worker_id text, lo int, hi int) ON picked.rn BETWEEN w.lo AND w.hi
   WHERE c.command_id = picked.command_id
  RETURNING ${QUALIFIED_COMMAND_COLUMNS}),
note AS (
  SELECT pg_notify('svc_commands', n::text) FROM (SELECT count(*) AS n FROM cmd WHERE status = 'PENDING') s WHERE n > 0)
SELECT 'claimed' AS kind, to_jsonb(c) AS row FROM cmd c WHERE c.status = 'CLAIMED'
UNION ALL SELECT 'claimed', to_jsonb(o) FROM older o
UNION ALL SELECT 'notified', NULL FROM note`;

type ClaimedJson = Omit<CommandRow, 'claimed_at' | 'heartbeat_at' | 'created_at'> & { claimed_at: string | null; heartbeat_at: string | null; created_at: string };

function claimRanges(claimers: { workerId: string; max: number }[]): { worker_id: string; lo: number; hi: number }[] {
  let next = 1;
  return claimers.filter((c) => c.max > 0).map((c) => ({ worker_id: c.workerId, lo: next, hi: (next += c.max) - 1 }));
}

/** Writes a unit in one statement; returns the commands now claimed by the reporting worker. */
export async function writeUnit(q: Queryable, w: UnitWrite): Promise<CommandRow[]> {
  const { claimOlder, ...data } = w;
  const { rows } = await q.query<{ kind: string; row: ClaimedJson | null }>({
    // Named: prepared once per connection, so its ten parts are not planned again on every step.
    name: 'svc_write_unit',
    text: WRITE_SQL,
    values: [
      JSON.stringify(data),
      // Claimers as row-number ranges of the pending commands picked, in order.
      JSON.stringify(claimRanges(claimOlder)),
      claimOlder.reduce((n, c) => n + c.max, 0),
      data.executions.map((e) => e.execution_id),
      data.lateAdvances.map((e) => e.execution_id),
      data.commandUpdates.map((c) => c.command_id),
      [...new Set(data.cancels.map((c) => c.execution_id))],
      data.keychainCleanup.map((k) => k.execution_id),
    ],
  });
  return rows
    .flatMap((r) => (r.kind === 'claimed' && r.row ? [r.row] : []))
    .map((r) => ({
      ...r,
      claimed_at: r.claimed_at ? new Date(r.claimed_at) : null,
      heartbeat_at: r.heartbeat_at ? new Date(r.heartbeat_at) : null,
      created_at: new Date(r.created_at),
    }))
    .sort((a, b) => a.command_id - b.command_id);
}
