import { cancellableSql, CANCELLED, CLAIMED, claimableSql, claimPlan, COMMAND_COLUMNS, COMMAND_COLUMNS_OF_C } from './command-plans.ts';
import type { ClaimPolicy, CommandRow, CommandStatus } from './command.repo.ts';
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
  /** Set when the command is handed straight to the reporting worker (claim-ahead)... */
  worker_id: string | null;
  /** ...by its request with this token (see migrations/0007_claim_token.sql). */
  claim_token: string | null;
};

/** An event row; `issued_seq` links a `command.issued` event to the command inserted with it. */
export type UnitEvent = EventRow & { issued_seq?: number | null };

/**
 * An event for an execution outside the unit (a parent told of its child's end, a child told to
 * cancel): appended to its log past its applied events, for its own next routing to apply.
 */
export type UnitInboxEvent = { execution_id: number; event_type: string; context: unknown; result: unknown; error: unknown };

/** An update of an execution read at `expected_last_event_id`: the write fails if it has moved on since. */
export type UnitExecutionUpdate = UnitExecution & { expected_last_event_id: number };
/** A command's new status; the write fails unless it still has the status and attempt it was read with. */
export type UnitCommandUpdate = { command_id: number; status: CommandStatus; expected_status: CommandStatus; expected_attempt: number };

export type UnitWrite = {
  /** Executions whose advisory locks the statement takes first (when no transaction holds them). */
  locks: number[];
  newExecutions: UnitNewExecution[];
  executions: UnitExecutionUpdate[];
  /** Finished executions seen with a late event: only their ids advance. */
  lateAdvances: { execution_id: number; last_event_id: number }[];
  commands: UnitCommand[];
  events: UnitEvent[];
  commandUpdates: UnitCommandUpdate[];
  cancels: { execution_id: number; seq: number }[];
  /** Entries of finished executions to remove: the scopes the keychain-entry machine decided. */
  keychainCleanup: { execution_id: number; scopes: string[] }[];
  /**
   * Also claim older commands: up to `max` for each of these workers, in order; PENDING ones, and
   * with a `claimPolicy` (while stranded commands were announced) those the reaper marked whose
   * claim the policy lets go.
   */
  claimOlder: Claimer[];
  claimPolicy: ClaimPolicy | null;
  /** Guard: the write fails (WRITE_GUARD_SQLSTATE) if a path has a version newer than this one. */
  headChecks: { path: string; version: number }[];
  /** Idempotency keys of new executions: a key already stored fails the write (idempotency.repo.ts). */
  idempotencyKeys: UnitIdempotencyKey[];
  /** Events for executions outside the unit, in order. */
  inbox: UnitInboxEvent[];
};

/** What a write did beyond its rows: the commands the claimers now hold, and the running executions that got inbox events (to route after commit). */
export type UnitWritten = { claimed: CommandRow[]; woken: number[] };

/** A start's key and its answer (`response`: the JSON text, replayed as it is). */
export type UnitIdempotencyKey = { scope: string; key: string; request_hash: string; execution_id: number; status_code: number; response: string };

/** SQLSTATE of a write whose guard failed (core.svc_write_guard_failed): nothing was written. */
export const WRITE_GUARD_SQLSTATE = 'SVC01';

const EXEC_FIELDS = `execution_id bigint, status text, progress numeric, result jsonb, error jsonb, snapshot jsonb, machine_version int,
  snapshot_event_id bigint, applied_event_id bigint, last_event_id bigint`;

/** A worker claiming up to `max` commands by a request with `token` (null: none given). */
export type Claimer = { workerId: string; max: number; token: string | null };

type WriteData = Omit<UnitWrite, 'claimOlder' | 'claimPolicy' | 'inbox'> & {
  claimOlder: { worker_id: string; token: string | null; lo: number; hi: number }[];
  claimPolicy: ClaimPolicy | null;
  inbox: (UnitInboxEvent & { ord: number })[];
};
type Part = Exclude<keyof WriteData, 'claimPolicy'>;
// The order of the parts fixes each statement's text and its prepared name.
const PARTS: readonly Part[] = ['locks', 'newExecutions', 'commands', 'events', 'executions', 'lateAdvances', 'commandUpdates', 'cancels', 'keychainCleanup', 'claimOlder', 'headChecks', 'idempotencyKeys', 'inbox'];

// Suffix of the names of write statements that also claim stranded commands.
const STRANDED_SUFFIX = '_r';

/** Parameters of one statement; `opaque` ones hide their value from the planner (see writeStatement). */
class Params {
  readonly values: unknown[] = [];
  #byPart = new Map<string, string>();

  /** A part's rows as one jsonb parameter (the same parameter when a part is read twice). */
  rows(part: Part, data: WriteData): string {
    let ref = this.#byPart.get(part);
    if (!ref) {
      this.values.push(JSON.stringify(data[part]));
      ref = `$${this.values.length}::jsonb`;
      this.#byPart.set(part, ref);
    }
    return ref;
  }

  opaque(value: unknown, type: string): string {
    this.values.push(value);
    return `(SELECT $${this.values.length}::${type})::${type}`;
  }
}

/**
 * Everything a unit writes, as ONE statement: each non-empty part is a data-modifying CTE over
 * its rows (a jsonb parameter); empty parts are left out, so each combination of parts is its
 * own prepared statement (named by the combination). Fewer round trips is most of a step's cost.
 *
 * Every value the planner could specialise on is wrapped in a sub-select: custom plans then cost
 * what the generic plan costs, so PostgreSQL keeps the generic plan instead of planning again on
 * every call (planning this statement costs more than running it). The id arrays repeat ids of
 * the rows so that rows are reached by index: the planner cannot see how few rows
 * jsonb_to_recordset yields and would otherwise scan whole tables.
 */
function writeStatement(data: WriteData): { name: string; text: string; values: unknown[] } {
  const present = PARTS.filter((part) => data[part].length > 0);
  const p = new Params();
  const ctes: string[] = [];
  const has = (part: Part) => present.includes(part);
  // With locks, every part that writes reads `lk` first, so no row is touched before they are held.
  const from = (source: string) => (has('locks') ? `lk, ${source}` : source);
  if (has('locks')) {
    ctes.push(`lk AS (SELECT count(pg_advisory_xact_lock(id)) AS n FROM unnest(${p.opaque([...data.locks].sort((a, b) => a - b), 'bigint[]')}) AS id)`);
  }
  if (has('newExecutions')) {
    ctes.push(`new_exec AS (
  INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status, progress,
                              result, error, snapshot, machine_version, snapshot_event_id, applied_event_id, last_event_id, finished_at)
  SELECT x.execution_id, x.catalog_id, x.path, x.parent_execution_id, x.root_execution_id, x.parent_command_id, x.status, x.progress,
         x.result, x.error, x.snapshot, x.machine_version, COALESCE(x.snapshot_event_id, 0), x.applied_event_id, x.last_event_id,
         CASE WHEN x.status <> 'running' THEN now() END
    FROM ${from(`jsonb_to_recordset(${p.rows('newExecutions', data)}) AS x(${EXEC_FIELDS}, catalog_id bigint, path text, parent_execution_id bigint,
         root_execution_id bigint, parent_command_id bigint)`)}
   ORDER BY x.execution_id)`);
  }
  if (has('commands')) {
    ctes.push(`cmd AS (
  INSERT INTO core.command (execution_id, catalog_id, seq, step, loop_index, status, input, worker_id, claim_token, attempt, claimed_at, heartbeat_at)
  SELECT x.execution_id, x.catalog_id, x.seq, x.step, x.loop_index, x.status, x.input, x.worker_id, x.claim_token,
         CASE WHEN x.worker_id IS NULL THEN 0 ELSE 1 END,
         CASE WHEN x.worker_id IS NULL THEN NULL ELSE now() END,
         CASE WHEN x.worker_id IS NULL THEN NULL ELSE now() END
    FROM ${from(`jsonb_to_recordset(${p.rows('commands', data)}) AS x(execution_id bigint, catalog_id bigint, seq int, step text, loop_index int,
         status text, input jsonb, worker_id text, claim_token text)`)}
  RETURNING ${COMMAND_COLUMNS})`);
  }
  if (has('events')) {
    // A command.issued event gets the id of the command inserted with it (joined on issued_seq).
    const [commandId, context, join] = has('commands')
      ? [
          'COALESCE(x.command_id, c.command_id)',
          `CASE WHEN c.command_id IS NULL THEN x.context ELSE COALESCE(x.context, '{}'::jsonb) || jsonb_build_object('command_id', c.command_id) END`,
          '\n    LEFT JOIN cmd c ON x.issued_seq IS NOT NULL AND c.execution_id = x.execution_id AND c.seq = x.issued_seq',
        ]
      : ['x.command_id', 'x.context', ''];
    ctes.push(`ev AS (
  INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error)
  SELECT x.execution_id, x.event_id, x.catalog_id, x.event_type, x.status, x.step, ${commandId}, x.worker_id, ${context}, x.result, x.error
    FROM ${from(`jsonb_to_recordset(${p.rows('events', data)}) AS x(execution_id bigint, event_id bigint, catalog_id bigint, event_type text, status text,
         step text, command_id bigint, worker_id text, context jsonb, result jsonb, error jsonb, issued_seq int)`)}${join})`);
  }
  if (has('executions')) {
    ctes.push(`upd_exec AS (
  UPDATE core.execution e
     SET status = x.status, progress = x.progress, result = x.result, error = x.error,
         snapshot = CASE WHEN x.snapshot_event_id IS NULL THEN e.snapshot ELSE x.snapshot END,
         machine_version = CASE WHEN x.snapshot_event_id IS NULL THEN e.machine_version ELSE x.machine_version END,
         snapshot_event_id = COALESCE(x.snapshot_event_id, e.snapshot_event_id),
         applied_event_id = x.applied_event_id, last_event_id = x.last_event_id, updated_at = now(),
         finished_at = CASE WHEN x.status <> 'running' AND e.finished_at IS NULL THEN now() ELSE e.finished_at END
    FROM ${from(`jsonb_to_recordset(${p.rows('executions', data)}) AS x(${EXEC_FIELDS}, expected_last_event_id bigint)`)}
   WHERE e.execution_id = x.execution_id AND e.last_event_id = x.expected_last_event_id
     AND e.execution_id = ANY(${p.opaque(data.executions.map((e) => e.execution_id), 'bigint[]')})
  RETURNING e.execution_id)`);
  }
  if (has('lateAdvances')) {
    ctes.push(`late AS (
  UPDATE core.execution e SET last_event_id = x.last_event_id, applied_event_id = GREATEST(e.applied_event_id, x.last_event_id)
    FROM ${from(`jsonb_to_recordset(${p.rows('lateAdvances', data)}) AS x(execution_id bigint, last_event_id bigint)`)}
   WHERE e.execution_id = x.execution_id AND e.execution_id = ANY(${p.opaque(data.lateAdvances.map((e) => e.execution_id), 'bigint[]')}))`);
  }
  if (has('commandUpdates')) {
    ctes.push(`upd_cmd AS (
  UPDATE core.command c SET status = x.status, updated_at = now(), heartbeat_at = now()
    FROM ${from(`jsonb_to_recordset(${p.rows('commandUpdates', data)}) AS x(command_id bigint, status text, expected_status text, expected_attempt int)`)}
   WHERE c.command_id = x.command_id AND c.status = x.expected_status AND c.attempt = x.expected_attempt
     AND c.command_id = ANY(${p.opaque(data.commandUpdates.map((c) => c.command_id), 'bigint[]')})
  RETURNING c.command_id)`);
  }
  if (has('cancels')) {
    ctes.push(`cancel AS (
  UPDATE core.command c SET status = ${CANCELLED}, updated_at = now()
    FROM ${from(`jsonb_to_recordset(${p.rows('cancels', data)}) AS x(execution_id bigint, seq int)`)}
   WHERE c.execution_id = x.execution_id AND c.seq = x.seq AND c.execution_id = ANY(${p.opaque([...new Set(data.cancels.map((c) => c.execution_id))], 'bigint[]')})
     AND ${cancellableSql('c')})`);
  }
  if (has('keychainCleanup')) {
    ctes.push(`kc AS (
  DELETE FROM core.keychain k USING ${from(`jsonb_to_recordset(${p.rows('keychainCleanup', data)}) AS x(execution_id bigint, scopes text[])`)}
   WHERE k.execution_id = x.execution_id AND k.execution_id = ANY(${p.opaque(data.keychainCleanup.map((k) => k.execution_id), 'bigint[]')})
     AND k.scope_type = ANY(x.scopes))`);
  }
  if (has('idempotencyKeys')) {
    // A plain insert: a key stored already (by another server, or a start that went before)
    // aborts the statement, so no execution is written without its key, or beside another's.
    ctes.push(`idem AS (
  INSERT INTO core.idempotency_key (scope, key, request_hash, execution_id, status_code, response)
  SELECT x.scope, x.key, x.request_hash, x.execution_id, x.status_code, x.response::json
    FROM ${from(`jsonb_to_recordset(${p.rows('idempotencyKeys', data)}) AS x(scope text, key text, request_hash text, execution_id bigint,
         status_code int, response text)`)})`);
  }
  if (has('claimOlder')) {
    // Older commands in id order, as row-number ranges per claimer: PENDING ones, and stranded
    // ones the reaper marked (command_reclaim_idx: empty while nothing is stranded, so this costs
    // one look at an empty index). Commands this statement cancels still read as they were here
    // (one snapshot), so they are left out by name. Without cancels the scan walks the pending
    // index in order and stops at the limit.
    const except = has('cancels')
      ? `
                     AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset(${p.rows('cancels', data)}) AS x(execution_id bigint, seq int)
                                      WHERE x.execution_id = o.execution_id AND x.seq = o.seq)`
      : '';
    const limit = p.opaque(
      data.claimOlder.reduce((n, c) => Math.max(n, c.hi), 0),
      'int',
    );
    const stranded = data.claimPolicy ? { stale: p.opaque(data.claimPolicy.staleSeconds, 'float8'), hard: p.opaque(data.claimPolicy.hardTimeoutSeconds, 'float8') } : null;
    const plan = claimPlan('older', { limit, stranded, except }, { ranges: p.rows('claimOlder', data) }, COMMAND_COLUMNS_OF_C);
    ctes.push(...plan.ctes, `older AS (
  ${plan.update})`);
  }
  // Every branch names its columns: the first one present names the result's.
  const outputs: string[] = [];
  if (has('inbox')) {
    // Each target's row takes as many event ids as it gets events (an UPDATE touches a row once
    // per statement), then its events take them in order. A cancel is itself the terminal event:
    // it carries the status it ends a running execution with.
    ctes.push(`inbox_in AS (
  SELECT x.* FROM ${from(`jsonb_to_recordset(${p.rows('inbox', data)}) AS x(ord int, execution_id bigint, event_type text, context jsonb, result jsonb, error jsonb)`)}
), inbox_bump AS (
  UPDATE core.execution e SET last_event_id = e.last_event_id + n.m
    FROM (SELECT execution_id, count(*)::int AS m FROM inbox_in GROUP BY execution_id) n
   WHERE e.execution_id = n.execution_id AND e.execution_id = ANY(${p.opaque([...new Set(data.inbox.map((e) => e.execution_id))], 'bigint[]')})
  RETURNING e.execution_id, e.catalog_id, e.status, e.last_event_id - n.m AS from_event_id
), inbox_ev AS (
  INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, context, result, error)
  SELECT x.execution_id, b.from_event_id + row_number() OVER (PARTITION BY x.execution_id ORDER BY x.ord), b.catalog_id, x.event_type,
         CASE WHEN x.event_type = 'execution.cancelled' AND b.status = 'running' THEN 'cancelled' ELSE b.status END, x.context, x.result, x.error
    FROM inbox_in x JOIN inbox_bump b ON b.execution_id = x.execution_id)`);
    outputs.push(`SELECT 'woken' AS kind, to_jsonb(b.execution_id) AS row FROM inbox_bump b WHERE b.status = 'running'`);
  }
  if (has('commands')) {
    ctes.push(`note AS (
  SELECT pg_notify('svc_commands', n::text) FROM (SELECT count(*) AS n FROM cmd c WHERE ${claimableSql('c')}) s WHERE n > 0)`);
    outputs.push(`SELECT 'claimed' AS kind, to_jsonb(c) AS row FROM cmd c WHERE c.status = ${CLAIMED}`, `SELECT 'notified' AS kind, NULL::jsonb AS row FROM note`);
  }
  if (has('claimOlder')) outputs.push(`SELECT 'claimed' AS kind, to_jsonb(o) AS row FROM older o`);
  if (has('headChecks')) {
    // Read by the final SELECT, so it runs; a failing row aborts the statement, and so every part.
    ctes.push(`stale AS (
  SELECT core.svc_write_guard_failed('a newer version of ' || x.path || ' was registered')
    FROM jsonb_to_recordset(${p.rows('headChecks', data)}) AS x(path text, version int)
   WHERE EXISTS (SELECT 1 FROM core.catalog c WHERE c.path = x.path AND c.version > x.version))`);
    outputs.push(`SELECT 'stale' AS kind, NULL::jsonb AS row FROM stale`);
  }
  if (has('executions') || has('commandUpdates')) {
    // Executions and commands were read before this statement (under locks, or from memory):
    // each update says what it found, and if any found other than that, nothing is written.
    const moved = [
      ...(has('executions') ? [`(SELECT count(*) FROM upd_exec) <> ${p.opaque(data.executions.length, 'int')}`] : []),
      ...(has('commandUpdates') ? [`(SELECT count(*) FROM upd_cmd) <> ${p.opaque(data.commandUpdates.length, 'int')}`] : []),
    ];
    ctes.push(`moved AS (SELECT core.svc_write_guard_failed('an execution or command changed since it was read') WHERE ${moved.join(' OR ')})`);
    outputs.push(`SELECT 'moved' AS kind, NULL::jsonb AS row FROM moved`);
  }
  if (!outputs.length) outputs.push('SELECT NULL::text AS kind, NULL::jsonb AS row WHERE false');
  const mask = present.reduce((m, part) => m | (1 << PARTS.indexOf(part)), 0);
  const text = `${ctes.length ? `WITH ${ctes.join(',\n')}\n` : ''}${outputs.join('\nUNION ALL ')}`;
  // The claim of stranded commands is its own statement too: `_r`.
  const stranded = has('claimOlder') && data.claimPolicy ? STRANDED_SUFFIX : '';
  return { name: `svc_write_unit_${mask.toString(16)}${stranded}`, text, values: p.values };
}

/** The parts a write statement's prepared name stands for; undefined for other names (for measurement). */
export function writeStatementParts(name: string): string[] | undefined {
  const m = /^svc_write_unit_([0-9a-f]+)(_r)?$/.exec(name);
  if (!m) return undefined;
  const mask = Number.parseInt(m[1], 16);
  return [...PARTS.filter((_, i) => mask & (1 << i)), ...(m[2] ? ['claimStranded'] : [])];
}

type ClaimedJson = Omit<CommandRow, 'claimed_at' | 'heartbeat_at' | 'created_at'> & { claimed_at: string | null; heartbeat_at: string | null; created_at: string };

function claimRanges(claimers: Claimer[]): WriteData['claimOlder'] {
  let next = 1;
  return claimers.filter((c) => c.max > 0).map((c) => ({ worker_id: c.workerId, token: c.token, lo: next, hi: (next += c.max) - 1 }));
}

/** Writes a unit in one statement; returns the commands now claimed by the reporting worker and the executions its inbox events woke. */
export async function writeUnit(q: Queryable, w: UnitWrite): Promise<UnitWritten> {
  const statement = writeStatement({ ...w, claimOlder: claimRanges(w.claimOlder), inbox: w.inbox.map((e, ord) => ({ ...e, ord })) });
  if (!statement.values.length) return { claimed: [], woken: [] };
  // Named: prepared once per connection and combination of parts, so it is not planned again on every step.
  const { rows } = await q.query<{ kind: string; row: ClaimedJson | number | null }>(statement);
  const woken = rows.flatMap((r) => (r.kind === 'woken' && typeof r.row === 'number' ? [r.row] : []));
  const claimed = rows
    .flatMap((r) => (r.kind === 'claimed' && r.row !== null && typeof r.row === 'object' ? [r.row] : []))
    .map((r) => ({
      ...r,
      claimed_at: r.claimed_at ? new Date(r.claimed_at) : null,
      heartbeat_at: r.heartbeat_at ? new Date(r.heartbeat_at) : null,
      created_at: new Date(r.created_at),
    }))
    .sort((a, b) => a.command_id - b.command_id);
  return { claimed, woken };
}
