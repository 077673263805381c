import { cancellableSql, CANCELLED, CLAIMED, claimableSql, claimPlan, COMMAND_COLUMNS, COMMAND_COLUMNS_OF_C, heldSql } from './command-plans.ts';
import { commandOfJson, type ClaimPolicy, type CommandJson, type CommandRow, type CommandStatus } from './command.repo.ts';
import { eventLogCtes, LOG_APPEND_COLUMNS, LOG_EVENT_COLUMNS, type LogAppend, type LogEvent } from './event-log.ts';
import type { ExecutionRow, TaskTimer } from './execution.repo.ts';
import type { Queryable } from './queryable.ts';
import { opaque } from './opaque-param.ts';
import { LIVE_EXECUTION_SQL, TERMINAL_EXECUTION_SQL } from './sql-list.ts';

export type { LogAppend, LogEvent } from './event-log.ts';

/**
 * A new execution (a start, or a child started by its parent's unit): its row as inserted (the
 * times are the statement's; no stored snapshot: `snapshot_event_id` null); its events start at 1.
 */
export type UnitNewExecution = Omit<ExecutionRow, 'applied_event_id' | 'started_at' | 'updated_at' | 'finished_at' | 'snapshot_event_id'> & { snapshot_event_id: number | null };

/**
 * A new command's row: `worker_id` is set when it is handed straight to a worker (claim-ahead) by
 * its request with `claim_token` (migrations/0007_claim_token.sql); `priority` is the execution's;
 * `limit_name` and `limit_key` what its claim waits for room on (a task's `limit`), or null.
 */
export type UnitCommand = Pick<CommandRow, 'execution_id' | 'catalog_id' | 'seq' | 'step' | 'loop_index' | 'status' | 'input' | 'worker_id'> &
  Required<Pick<CommandRow, 'claim_token' | 'priority' | 'limit_name' | 'limit_key'>> & {
    /** The batch whose item issued it (actors/fold.ts), whichever routing wrote the item: its first claim is the batch's (src/metrics.ts). */
    issued_by_batch?: number;
  };

/**
 * An execution queued for admission (core.admission): by a concurrency limit's key (`capacity`
 * for an inline limit) and/or until `not_before` (a debounce window, whose later starts replace
 * `args`); or `admitted` at its start (its key had room: the write takes the slot or fails).
 */
export type UnitAdmission = {
  execution_id: number;
  limit_name: string | null;
  limit_key: string | null;
  capacity: number | null;
  priority: number;
  not_before: string | null;
  debounce_path: string | null;
  debounce_key: string | null;
  admitted: boolean;
};

/**
 * A command's new status; the write fails unless it still has the status and attempt it was read
 * with. `execution_id`: the command's (its row was read with it), so the move reaches it by its
 * execution too (one shard under Citus: docs/scaling.md). `report_id`: the worker report that
 * moves it, kept on the row (null: none named, the row keeps the one it had).
 */
export type UnitCommandUpdate = { execution_id: number; command_id: number; status: CommandStatus; expected_status: CommandStatus; expected_attempt: number; report_id: string | null };

/**
 * A worker claiming up to `max` commands by a request with `token` (null: none given); `newOnly`:
 * only commands the write issues itself, no pick of older ones (a parked claimer, actors/parked-claims.ts).
 */
export type Claimer = { workerId: string; max: number; token: string | null; newOnly?: boolean };

/**
 * A wait a step begins (core.wait): its wake-up time for a timer or a signal's timeout (null: none);
 * `purpose`, what a `playbook` task's own timer is for (null: a step's own wait).
 */
export type UnitWait = { execution_id: number; seq: number; step: string; kind: 'timer' | 'signal'; signal: string | null; wake_at: string | null; approval_roles: string[] | null; purpose: TaskTimer | null };

/** A wait that is over: the one under `seq` of the execution. */
export type UnitWaitEnd = { execution_id: number; seq: number };

/** A start's key and its answer (`response`: the JSON text, replayed as it is). */
export type UnitIdempotencyKey = { scope: string; key: string; request_hash: string; execution_id: number; status_code: number; response: string };

/** Everything one unit of work writes; every part is present, empty when there is nothing. */
export type UnitWrite = {
  newExecutions: UnitNewExecution[];
  /** One per execution whose log grows: guarded ones were read at `expected`; the statement fails if one moved on. */
  appends: LogAppend[];
  /** The appended events, per execution in `ord` order (new executions' too). */
  events: LogEvent[];
  commands: UnitCommand[];
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
  /** Claim-ahead also takes commands of limits' keys with room (the unit frees a limit's slot: its text with that pick). */
  claimLimited: boolean;
  /** Guard: the write fails (WRITE_GUARD_SQLSTATE) if a path has a version newer than this one. */
  headChecks: { path: string; version: number }[];
  /** Idempotency keys of new executions (or signals): a key already stored fails the write (idempotency.repo.ts). */
  idempotencyKeys: UnitIdempotencyKey[];
  waits: UnitWait[];
  waitEnds: UnitWaitEnd[];
  admissions: UnitAdmission[];
  /** Executions that ended and were queued for admission: their rows go, giving back the slot an admitted one held. */
  admissionEnds: number[];
};

/** What a write did beyond its rows: the commands the claimers now hold, and the running executions that got inbox events (to route after commit). */
export type UnitWritten = { claimed: CommandRow[]; woken: number[] };

/** SQLSTATE of a write whose guard failed (core.svc_write_guard_failed): nothing was written. */
export const WRITE_GUARD_SQLSTATE = 'SVC01';

/** The prepared name of the write statement (bench/statement-timer.ts names it by this). */
export const UNIT_WRITE_STATEMENT = 'svc_write_unit';
/** ...of its text with the limited pick in claim-ahead. */
export const UNIT_WRITE_LIMITED_STATEMENT = 'svc_write_unit_limited';
/** ...and of the step write: the report that moves steps along and nothing else. */
export const STEP_WRITE_STATEMENT = 'svc_write_step';
/** ...and of the step write whose claim-ahead also takes stranded commands (while the reaper has announced some). */
export const STEP_WRITE_STRANDED_STATEMENT = 'svc_write_step_stranded';
/** ...and of the step write whose reporting workers want no older command (their next came with the unit, or none). */
export const STEP_WRITE_NO_PICK_STATEMENT = 'svc_write_step_no_pick';
/** ...and of the unit write when nobody wants an older command (a cancel, a wake-up, an execution's end). */
export const UNIT_WRITE_NO_PICK_STATEMENT = 'svc_write_unit_no_pick';
/** ...and of the unit write that ends nothing, stores no idempotency key and wants no older command (a start, chiefly). */
export const START_WRITE_STATEMENT = 'svc_write_start';

/** The statement's parameters, by name; a text numbers those it uses in this order. */
const PARAMS = [
  'newExecutions', 'appends', 'appendIds', 'events', 'commands', 'commandUpdates', 'commandUpdateIds', 'cancels', 'cancelIds', 'keychainCleanup',
  'keychainIds', 'idempotencyKeys', 'claimRanges', 'claimLimit', 'staleSeconds', 'hardSeconds', 'headChecks', 'guarded', 'waits', 'waitEnds',
  'waitEndIds', 'admissions', 'admissionEnds',
] as const;
type Param = (typeof PARAMS)[number];

/** The parameters of the step write: the event log's append, commands issued and moved, claim-ahead and the guard. */
const STEP_PARAMS: readonly Param[] = ['appends', 'appendIds', 'events', 'commands', 'commandUpdates', 'commandUpdateIds', 'claimRanges', 'claimLimit', 'guarded'];
/** ...and the claim policy, when its claim-ahead also takes stranded commands. */
const STEP_STRANDED_PARAMS: readonly Param[] = [...STEP_PARAMS, 'staleSeconds', 'hardSeconds'];
/** Claim-ahead's parameters: a text without its pick (nobody wants an older command) takes none of them. */
const PICK_PARAMS: readonly Param[] = ['claimRanges', 'claimLimit', 'staleSeconds', 'hardSeconds'];
const STEP_NO_PICK_PARAMS: readonly Param[] = STEP_PARAMS.filter((p) => !PICK_PARAMS.includes(p));
const UNIT_NO_PICK_PARAMS: readonly Param[] = PARAMS.filter((p) => !PICK_PARAMS.includes(p));
/**
 * What the start write leaves out: the parts that end something (cancels, keychain cleanup, waits
 * and admissions ended), which a start never has, and idempotency keys, which most starts do not
 * have (those that do send the unit write without the pick).
 */
const NOT_IN_START_PARAMS: readonly Param[] = ['cancels', 'cancelIds', 'keychainCleanup', 'keychainIds', 'waitEnds', 'waitEndIds', 'admissionEnds', 'idempotencyKeys'];
const START_PARAMS: readonly Param[] = UNIT_NO_PICK_PARAMS.filter((p) => !NOT_IN_START_PARAMS.includes(p));


// Parameters hidden from the planner (opaque: planning this statement costs more than running
// it), and id arrays beside each jsonb so rows are reached by index (the planner cannot see how
// few rows jsonb_to_recordset yields).

/**
 * Claim-ahead's pick of older commands. `limited`: also commands of limits' keys with room (the
 * workers' claim's full pick, counting the keys). PostgreSQL starts every part of a statement at
 * each execution, rows or not, and that pick's parts cost an ordinary step about 0.2 ms of
 * PostgreSQL CPU (docs/benchmarks.md), so it is in the text only a unit that frees a limit's slot
 * sends: the worker that reports it takes the next command of a key with room at once.
 * `cancels`: the relation of commands the statement cancels, which still read as they were here
 * (one snapshot): left out by name.
 */
const olderPick = ($: (p: Param) => string, limited: boolean, stranded: boolean, cancels: string | null) =>
  claimPlan(
    'older',
    {
      limit: opaque($('claimLimit'), 'int'),
      // Without a policy (nothing stranded was announced) both are NULL and the stranded pick takes nothing.
      stranded: stranded ? { stale: opaque($('staleSeconds'), 'float8'), hard: opaque($('hardSeconds'), 'float8') } : null,
      limited,
      ...(cancels
        ? {
            except: `
                     AND NOT EXISTS (SELECT 1 FROM ${cancels} WHERE x.execution_id = o.execution_id AND x.seq = o.seq)`,
          }
        : {}),
    },
    { ranges: `${$('claimRanges')}::jsonb` },
    COMMAND_COLUMNS_OF_C,
  );

/**
 * The write of every unit (starts, reports, cancels, wake-ups): ONE statement of fixed text per
 * kind, prepared once per connection, every part present (an empty array where there is
 * nothing). Its parts (their order in the text means nothing: every part sees the statement's
 * one snapshot): new executions; new commands (those handed to the reporting worker already
 * claimed); the event log's append (src/db/event-log.ts: each execution's row moves on, guarded
 * by the `last_event_id` it was read at, and its events take the ids); command moves
 * (compare-and-set on status and attempt); cancels; keychain cleanup; idempotency keys; waits
 * begun and ended (core.wait, whose one writer this is); admissions queued and ended
 * (core.admission, with the flow keys they and limited commands wait on); claim-ahead of older
 * commands; the catalog-head checks; and the guard: if any execution or command moved on since
 * it was read, `core.svc_write_guard_failed` aborts the statement and nothing is written.
 *
 * `parts`: `all` of them; `step`, the step write, the kind nearly every report is (a command's
 * events, the next step's command, claim-ahead): without the parts such a unit never has (new
 * executions, cancels, keychain cleanup, idempotency keys, waits, admissions, head checks);
 * `start`, the start write: without the parts that end something (cancels, keychain cleanup,
 * waits and admissions ended), which a start never has, and the idempotency keys' (a start with
 * a key sends the full text; without that part the start reaches no table of another shard under
 * Citus: docs/scaling.md). PostgreSQL starts every part of a statement at each execution, rows
 * or not: those cost a step 0.1 ms of its CPU, a start ~0.1 ms.
 */
function unitWriteText($: (p: Param) => string, kind: Kind): string {
  const full = kind.parts !== 'step';
  const all = kind.parts === 'all';
  const cancels = all ? `jsonb_to_recordset(${$('cancels')}::jsonb) AS x(execution_id bigint, seq int)` : null;
  const older = kind.pick ? olderPick($, kind.limited, kind.stranded, cancels) : null;
  const newExec = () => `new_exec AS (
  INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status, progress,
                              result, error, snapshot, machine_version, snapshot_event_id, applied_event_id, last_event_id, finished_at)
  SELECT x.execution_id, x.catalog_id, x.path, x.parent_execution_id, x.root_execution_id, x.parent_command_id, x.status, x.progress,
         x.result, x.error, x.snapshot, x.machine_version, COALESCE(x.snapshot_event_id, 0), x.last_event_id, x.last_event_id,
         CASE WHEN x.status IN ${TERMINAL_EXECUTION_SQL} THEN now() END
    FROM jsonb_to_recordset(${$('newExecutions')}::jsonb) AS x(execution_id bigint, catalog_id bigint, path text, parent_execution_id bigint,
         root_execution_id bigint, parent_command_id bigint, status text, progress numeric, result jsonb, error jsonb, snapshot jsonb,
         machine_version int, snapshot_event_id bigint, last_event_id bigint)
   ORDER BY x.execution_id
  RETURNING execution_id, catalog_id, status
), `;
  const admissions = () => `, adm_new AS (
  -- Its flow key's row is made, an admitted one's slot taken (or the write refused), and given back
  -- when it goes, by triggers (migrations/0025, 0028).
  INSERT INTO core.admission (execution_id, limit_name, limit_key, capacity, priority, not_before, debounce_path, debounce_key, admitted_at)
  SELECT x.execution_id, x.limit_name, x.limit_key, x.capacity, x.priority, COALESCE(x.not_before, now()), x.debounce_path, x.debounce_key,
         CASE WHEN x.admitted THEN now() END
    FROM jsonb_to_recordset(${$('admissions')}::jsonb) AS x(execution_id bigint, limit_name text, limit_key text, capacity int, priority smallint,
         not_before timestamptz, debounce_path text, debounce_key text, admitted boolean)
)`;
  const admissionEnds = () => `, adm_end AS (
  DELETE FROM core.admission a WHERE a.execution_id = ANY(${opaque($('admissionEnds'), 'bigint[]')})
)`;
  const endings = () => `, cancel AS (
  -- One a worker holds is marked: it may run on until the worker hears of the cancel, and keeps its
  -- limit's slot and its execution's admission's until then (migrations/0054, 0055).
  UPDATE core.command c SET status = ${CANCELLED}, held_after_cancel = ${heldSql('c')}, updated_at = now()
    FROM ${cancels}
   WHERE c.execution_id = x.execution_id AND c.seq = x.seq AND c.execution_id = ANY(${opaque($('cancelIds'), 'bigint[]')}) AND ${cancellableSql('c')}
), kc AS (
  DELETE FROM core.keychain k USING jsonb_to_recordset(${$('keychainCleanup')}::jsonb) AS x(execution_id bigint, scopes text[])
   WHERE k.execution_id = x.execution_id AND k.execution_id = ANY(${opaque($('keychainIds'), 'bigint[]')}) AND k.scope_type = ANY(x.scopes)
), wait_end AS (
  DELETE FROM core.wait w USING jsonb_to_recordset(${$('waitEnds')}::jsonb) AS x(execution_id bigint, seq int)
   WHERE w.execution_id = x.execution_id AND w.seq = x.seq AND w.execution_id = ANY(${opaque($('waitEndIds'), 'bigint[]')})
)`;
  const idem = () => `, idem AS (
  -- A plain insert: a key stored already (by another server, or a start that went before) aborts
  -- the statement, so no execution is written without its key, or beside another's.
  INSERT INTO core.idempotency_key (scope, key, request_hash, execution_id, status_code, response)
  SELECT x.scope, x.key, x.request_hash, x.execution_id, x.status_code, x.response::json
    FROM jsonb_to_recordset(${$('idempotencyKeys')}::jsonb) AS x(scope text, key text, request_hash text, execution_id bigint,
         status_code int, response text)
)`;
  const waitSet = () => `, wait_set AS (
  INSERT INTO core.wait (execution_id, seq, step, kind, signal, wake_at, approval_roles, purpose)
  SELECT x.execution_id, x.seq, x.step, x.kind, x.signal, x.wake_at, x.approval_roles, x.purpose
    FROM jsonb_to_recordset(${$('waits')}::jsonb) AS x(execution_id bigint, seq int, step text, kind text, signal text, wake_at timestamptz,
         approval_roles text[], purpose jsonb)
)`;
  const stale = () => `, stale AS (
  SELECT core.svc_write_guard_failed('a newer version of ' || x.path || ' was registered')
    FROM jsonb_to_recordset(${$('headChecks')}::jsonb) AS x(path text, version int)
   WHERE EXISTS (SELECT 1 FROM core.catalog c WHERE c.path = x.path AND c.version > x.version)
)`;
  return `WITH RECURSIVE ${full ? newExec() : ''}cmd AS (
  INSERT INTO core.command (execution_id, catalog_id, seq, step, loop_index, status, input, worker_id, claim_token, attempt, claimed_at, heartbeat_at,
                            priority, limit_name, limit_key, issued_by_batch)
  SELECT x.execution_id, x.catalog_id, x.seq, x.step, x.loop_index, x.status, x.input, x.worker_id, x.claim_token,
         CASE WHEN x.worker_id IS NULL THEN 0 ELSE 1 END,
         CASE WHEN x.worker_id IS NULL THEN NULL ELSE now() END,
         CASE WHEN x.worker_id IS NULL THEN NULL ELSE now() END,
         x.priority, x.limit_name, x.limit_key, x.issued_by_batch
    FROM jsonb_to_recordset(${$('commands')}::jsonb) AS x(execution_id bigint, catalog_id bigint, seq int, step text, loop_index int,
         status text, input jsonb, worker_id text, claim_token text, priority smallint, limit_name text, limit_key text, issued_by_batch bigint)
  RETURNING ${COMMAND_COLUMNS}
)${full ? admissions() : ''}${all ? admissionEnds() : ''}, log_in AS (
  SELECT * FROM jsonb_to_recordset(${$('appends')}::jsonb) AS x(${LOG_APPEND_COLUMNS})
), log_events AS (
  SELECT * FROM jsonb_to_recordset(${$('events')}::jsonb) AS v(${LOG_EVENT_COLUMNS})
), ${eventLogCtes({ appends: 'log_in', events: 'log_events', ids: opaque($('appendIds'), 'bigint[]'), ...(full ? { created: 'new_exec' } : {}), issued: 'cmd' }).join(', ')}, upd_cmd AS (
  -- By its execution too (the row is one execution's: one shard under Citus); the id array
  -- reaches it by its primary key.
  UPDATE core.command c SET status = x.status, updated_at = now(), heartbeat_at = now(), report_id = COALESCE(x.report_id, c.report_id)
    FROM jsonb_to_recordset(${$('commandUpdates')}::jsonb) AS x(execution_id bigint, command_id bigint, status text, expected_status text,
         expected_attempt int, report_id text)
   WHERE c.command_id = x.command_id AND c.execution_id = x.execution_id AND c.status = x.expected_status AND c.attempt = x.expected_attempt
     AND c.command_id = ANY(${opaque($('commandUpdateIds'), 'bigint[]')})
  RETURNING c.command_id
)${all ? idem() : ''}${full ? waitSet() : ''}${all ? endings() : ''}${older ? `, ${older.ctes.join(', ')}, older AS (
  ${older.update}
)` : ''}, note AS (
  -- Off on a connection whose bus is NATS (src/db/db.ts NOTIFY_OFF): the engine announces after commit.
  SELECT pg_notify('svc_commands', n::text) FROM (SELECT count(*) AS n FROM cmd c WHERE ${claimableSql('c')}) s
   WHERE n > 0 AND current_setting('svc.notify', true) IS DISTINCT FROM 'off'
)${full ? stale() : ''}, moved AS (
  SELECT core.svc_write_guard_failed('an execution or command changed since it was read')
   WHERE (SELECT count(*) FROM log_bump WHERE guarded) <> ${opaque($('guarded'), 'int')}
      OR (SELECT count(*) FROM upd_cmd) <> jsonb_array_length(${$('commandUpdates')}::jsonb)
)
SELECT 'claimed' AS kind, to_json(c) AS row FROM cmd c WHERE c.status = ${CLAIMED}${older ? `
UNION ALL SELECT 'claimed', to_json(o) FROM older o` : ''}
UNION ALL SELECT 'woken', to_json(b.execution_id) FROM log_bump b WHERE NOT b.guarded AND NOT b.applied AND b.status IN ${LIVE_EXECUTION_SQL}
UNION ALL SELECT 'notified', NULL FROM note${full ? `
UNION ALL SELECT 'stale', NULL FROM stale` : ''}
UNION ALL SELECT 'moved', NULL FROM moved`;
}

/** A prepared text and the parameters it takes, in order. */
type Statement = { name: string; text: string; params: readonly Param[] };

/**
 * Which text: the parts (`parts`: every one, the step write's, the start write's); claim-ahead's
 * pick (`pick`), with limits' keys, and with the stranded pick. No text has the pick when no
 * claimer wants an older command (a start; a sequential step, whose next command comes with the
 * unit, claimed). A full unit's pick always has the stranded one too (it is rare); the step
 * write's only while stranded commands were announced, as the workers' claim does. PostgreSQL
 * starts every part of a statement on each execution, rows or not: docs/benchmarks.md has what
 * each costs a step.
 */
type Kind = { parts: 'step' | 'start' | 'all'; pick: boolean; limited: boolean; stranded: boolean };

function statement(name: string, params: readonly Param[], kind: Kind): Statement {
  const $ = (p: Param) => {
    const i = params.indexOf(p);
    if (i < 0) throw new Error(`the write ${name} takes no ${p}`);
    return `$${i + 1}`;
  };
  return { name, text: unitWriteText($, kind), params };
}

/**
 * The write's texts: the one every unit may send, the same freeing a limit's slot (claim-ahead
 * takes limited commands too), and without claim-ahead's pick (no claimer wants an older
 * command); the start write (ends nothing, no idempotency key, no pick); the step write, without and with stranded
 * commands announced, and without the pick (a sequential step, whose next command it hands over).
 */
const UNIT = statement(UNIT_WRITE_STATEMENT, PARAMS, { parts: 'all', pick: true, limited: false, stranded: true });
const UNIT_LIMITED = statement(UNIT_WRITE_LIMITED_STATEMENT, PARAMS, { parts: 'all', pick: true, limited: true, stranded: true });
const UNIT_NO_PICK = statement(UNIT_WRITE_NO_PICK_STATEMENT, UNIT_NO_PICK_PARAMS, { parts: 'all', pick: false, limited: false, stranded: false });
const START = statement(START_WRITE_STATEMENT, START_PARAMS, { parts: 'start', pick: false, limited: false, stranded: false });
const STEP = statement(STEP_WRITE_STATEMENT, STEP_PARAMS, { parts: 'step', pick: true, limited: false, stranded: false });
const STEP_STRANDED = statement(STEP_WRITE_STRANDED_STATEMENT, STEP_STRANDED_PARAMS, { parts: 'step', pick: true, limited: false, stranded: true });
const STEP_NO_PICK = statement(STEP_WRITE_NO_PICK_STATEMENT, STEP_NO_PICK_PARAMS, { parts: 'step', pick: false, limited: false, stranded: false });

/** Whether a unit ends nothing: no commands cancelled, no keychain cleaned, no wait or admission ended. */
function endsNothing(w: UnitWrite): boolean {
  return !w.cancels.length && !w.keychainCleanup.length && !w.waitEnds.length && !w.admissionEnds.length;
}

/** Whether a unit has only the step write's parts: it appends to executions it holds (none started), issues, moves and claims commands. */
function isStep(w: UnitWrite): boolean {
  return endsNothing(w) && !w.claimLimited && !w.newExecutions.length && !w.idempotencyKeys.length && !w.headChecks.length && !w.waits.length && !w.admissions.length;
}

type ClaimRange = { worker_id: string; token: string | null; lo: number; hi: number };

function claimRanges(claimers: readonly Claimer[]): ClaimRange[] {
  let next = 1;
  return claimers.filter((c) => c.max > 0).map((c) => ({ worker_id: c.workerId, token: c.token, lo: next, hi: (next += c.max) - 1 }));
}

/**
 * Flat records as JSON for jsonb_to_recordset, their null fields left out: it reads an absent key
 * as NULL, as it reads a null, and PostgreSQL parses a quarter fewer bytes and keys of a step's
 * events (docs/benchmarks.md, "Forty-fourth session"). Only the top level: values inside a
 * record (a context, a result, an input) are sent as they are.
 */
function recordsJson(rows: readonly Record<string, unknown>[]): string {
  const kept: Record<string, unknown>[] = [];
  for (const r of rows) {
    const out: Record<string, unknown> = {};
    // for...in, not Object.entries: no array per field (these are plain objects of the unit's own).
    for (const k in r) if (r[k] !== null) out[k] = r[k];
    kept.push(out);
  }
  return JSON.stringify(kept);
}

/** Each parameter from the unit (and its claim-ahead ranges): a text's are computed, the others not. */
const PARAM_OF: Record<Param, (w: UnitWrite, ranges: ClaimRange[]) => unknown> = {
  newExecutions: (w) => recordsJson(w.newExecutions),
  appends: (w) => recordsJson(w.appends),
  appendIds: (w) => w.appends.map((a) => a.execution_id),
  events: (w) => recordsJson(w.events),
  commands: (w) => recordsJson(w.commands),
  commandUpdates: (w) => recordsJson(w.commandUpdates),
  commandUpdateIds: (w) => w.commandUpdates.map((c) => c.command_id),
  cancels: (w) => JSON.stringify(w.cancels),
  cancelIds: (w) => [...new Set(w.cancels.map((c) => c.execution_id))],
  keychainCleanup: (w) => JSON.stringify(w.keychainCleanup),
  keychainIds: (w) => w.keychainCleanup.map((k) => k.execution_id),
  idempotencyKeys: (w) => JSON.stringify(w.idempotencyKeys),
  claimRanges: (_, ranges) => JSON.stringify(ranges),
  claimLimit: (_, ranges) => claimLimit(ranges),
  staleSeconds: (w) => w.claimPolicy?.staleSeconds ?? null,
  hardSeconds: (w) => w.claimPolicy?.hardTimeoutSeconds ?? null,
  headChecks: (w) => JSON.stringify(w.headChecks),
  guarded: (w) => w.appends.filter((a) => a.expected !== null).length,
  waits: (w) => recordsJson(w.waits),
  waitEnds: (w) => JSON.stringify(w.waitEnds),
  waitEndIds: (w) => [...new Set(w.waitEnds.map((e) => e.execution_id))],
  admissions: (w) => recordsJson(w.admissions),
  admissionEnds: (w) => w.admissionEnds,
};

/** How many commands claim-ahead's pick may take: the last claimer's upper bound, 0 for none. */
function claimLimit(ranges: readonly ClaimRange[]): number {
  return ranges.reduce((n, c) => Math.max(n, c.hi), 0);
}

/** Writes a unit in its one statement (of its kind); returns the commands now claimed by the claimers and the executions its inbox events woke. */
export async function writeUnit(q: Queryable, w: UnitWrite): Promise<UnitWritten> {
  const ranges = claimRanges(w.claimOlder);
  const pick = claimLimit(ranges) !== 0;
  const s = isStep(w)
    ? (!pick ? STEP_NO_PICK : w.claimPolicy ? STEP_STRANDED : STEP)
    : !pick ? (endsNothing(w) && !w.idempotencyKeys.length ? START : UNIT_NO_PICK) : w.claimLimited ? UNIT_LIMITED : UNIT;
  const { rows } = await q.query<{ kind: string; row: CommandJson | number | null }>({ name: s.name, text: s.text, values: s.params.map((n) => PARAM_OF[n](w, ranges)) });
  const woken = rows.flatMap((r) => (r.kind === 'woken' && typeof r.row === 'number' ? [r.row] : []));
  const claimed = rows
    .flatMap((r) => (r.kind === 'claimed' && r.row !== null && typeof r.row === 'object' ? [r.row] : []))
    .map(commandOfJson)
    .sort((a, b) => a.command_id - b.command_id);
  return { claimed, woken };
}
