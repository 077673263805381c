import type { CommandStatus } from '../../machines/command.machine.ts';
import type { Config } from '../config.ts';
import { CANCELLED, CLAIMED, claimableSql, claimPlan, claimTakeableSql, COMMAND_COLUMNS, heldSql, notPausedSql, withdrawableSql, WITHDRAWN } from './command-plans.ts';
import type { Queryable } from './queryable.ts';

export type { CommandStatus } from '../../machines/command.machine.ts';

export type CommandRow = {
  command_id: number;
  execution_id: number;
  catalog_id: number;
  seq: number;
  step: string;
  loop_index: number | null;
  status: CommandStatus;
  attempt: number;
  worker_id: string | null;
  /** The request that claimed it, where the reader selected it (claim answers). */
  claim_token?: string | null;
  input: unknown;
  claimed_at: Date | null;
  heartbeat_at: Date | null;
  created_at: Date;
  /** The batch whose routing issued it (core.batch_request.batch_id, as text), if one did: the first-claim metric reads it. */
  issued_by_batch?: string | null;
  /** Claimed first (0..9). */
  priority?: number;
  /** The limit and key (a task's `limit`) its claim waited for room on, or null. */
  limit_name?: string | null;
  limit_key?: string | null;
  /** The worker report (its request's `report_id`) that last moved it in its current claim, or null (actors/route-report.ts). */
  report_id?: string | null;
  /** Where a claim returned it: this claim took room on its limit's key (TOOK_ROOM, command-plans.ts). */
  took_room?: boolean;
};

const GET_COMMAND = `SELECT ${COMMAND_COLUMNS} FROM core.command WHERE command_id = $1`;

/** A command row as `to_json` gives it (times as ISO text). */
export type CommandJson = Omit<CommandRow, 'claimed_at' | 'heartbeat_at' | 'created_at'> & { claimed_at: string | null; heartbeat_at: string | null; created_at: string };

/** A command row read as jsonb (a statement that returns several kinds of rows), with its times as dates. */
export function commandOfJson(r: CommandJson): CommandRow {
  return {
    ...r,
    claimed_at: r.claimed_at === null ? null : new Date(r.claimed_at),
    heartbeat_at: r.heartbeat_at === null ? null : new Date(r.heartbeat_at),
    created_at: new Date(r.created_at),
  };
}

export async function getCommand(q: Queryable, id: number): Promise<CommandRow | undefined> {
  const { rows } = await q.query<CommandRow>(GET_COMMAND, [id]);
  return rows[0];
}

/** A command of a step held by a worker now, as the step's runs show it before its first report. */
export type HeldStepCommand = { seq: number; worker_id: string | null; claimed_at: string | null; attempt: number };

/**
 * The commands of one step of an execution that a worker holds (claimed, or running with no
 * report yet): their claim is written to the log only with the claim's first report, which for
 * a long task is its end. Of an execution that has ended (`ended`), those cancelled while a worker
 * held them: their first report came after the cancel (late, applied to nothing) or never, so the
 * claim is in the log nowhere, and the row still names its worker and claim time.
 */
export async function heldStepCommands(q: Queryable, executionId: number, step: string, ended = false): Promise<HeldStepCommand[]> {
  const which = ended ? `c.status = ${CANCELLED} AND c.worker_id IS NOT NULL AND c.claimed_at IS NOT NULL` : heldSql('c');
  const { rows } = await q.query<HeldStepCommand>(
    `SELECT seq, worker_id, to_char(claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS claimed_at, attempt
       FROM core.command c WHERE c.execution_id = $1 AND c.step = $2 AND ${which} ORDER BY c.seq`,
    [executionId, step],
  );
  return rows;
}

/**
 * Of an execution's commands `seqs`, those cancelled while a worker held them, with the claim the
 * cancel left on the row (the traces read it: the claim reaches the log with the worker's first
 * report, which came after the cancel or never).
 */
export async function cancelledClaims(q: Queryable, executionId: number, seqs: readonly number[]): Promise<HeldStepCommand[]> {
  const { rows } = await q.query<HeldStepCommand>(
    `SELECT seq, worker_id, to_char(claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS claimed_at, attempt
       FROM core.command c WHERE c.execution_id = $1 AND c.seq = ANY($2::int[]) AND c.status = ${CANCELLED} AND c.worker_id IS NOT NULL AND c.claimed_at IS NOT NULL`,
    [executionId, seqs],
  );
  return rows;
}

/** How many of an execution's commands wait for a claimer (at most `max`): what a resume gave back. */
export async function claimableCount(q: Queryable, executionId: number, max: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM core.command c WHERE c.execution_id = $1 AND ${claimableSql('c')} LIMIT $2) x`,
    [executionId, max],
  );
  return rows[0].n;
}

/**
 * When a claim may be taken from its holder (the claim policy): the holder's pool is stopped, its
 * heartbeat is older than `staleSeconds`, or a heartbeat heard `staleSeconds` after the claim no
 * longer lists the command (orphaned); an unregistered claimer whose claim heartbeat is that old;
 * or, with `hardTimeoutSeconds`, a claim older than that however healthy its holder.
 */
export type ClaimPolicy = { staleSeconds: number; hardTimeoutSeconds: number | null };

/** The claim policy of a server's configuration (the claim endpoints and claim-ahead use it). */
export function claimPolicyOf(config: Pick<Config, 'SVC_COMMAND_REAPER_WORKER_STALE_SECONDS' | 'SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS'>): ClaimPolicy {
  return { staleSeconds: config.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS, hardTimeoutSeconds: config.SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS ?? null };
}

// The claim plan's statements (command-plans.ts), made once: the claim by id (takes a held
// command only from a holder the policy lets go; it is no request's), alone or with its
// execution's id (then one execution's row: one shard under Citus), and the long poll without
// and with stranded commands announced.
const byId = (executionId?: string) => claimPlan('by_id', { id: '$1', executionId, policy: { stale: '$3::float8', hard: '$4::float8' } }, { worker: '$2', token: 'NULL' }, COMMAND_COLUMNS).update;
const CLAIM_BY_ID = byId();
const CLAIM_BY_ID_IN_EXECUTION = byId('$5');
const next = (stranded: boolean) => {
  const plan = claimPlan('next', { limit: '$2', stranded: stranded ? { stale: '$4::float8', hard: '$5::float8' } : null, limited: true }, { worker: '$1', token: '$3' }, COMMAND_COLUMNS);
  return `WITH RECURSIVE ${plan.ctes.join(',\n     ')}\n${plan.update}`;
};
const CLAIM_NEXT = next(false);
const CLAIM_NEXT_OR_STRANDED = next(true);

/**
 * Claims one command for a worker: one waiting for a claim, or a held one whose holder the policy
 * lets go; with `executionId`, only a command of that execution. Bumps `attempt` so reports from
 * an older claim are fenced off. Undefined when not claimable.
 */
export async function claimCommand(q: Queryable, commandId: number, workerId: string, policy: ClaimPolicy, executionId?: number): Promise<CommandRow | undefined> {
  const values = [commandId, workerId, policy.staleSeconds, policy.hardTimeoutSeconds];
  const { rows } =
    executionId === undefined
      ? await q.query<CommandRow>({ name: 'svc_claim_by_id', text: CLAIM_BY_ID, values })
      : await q.query<CommandRow>({ name: 'svc_claim_by_id_in_execution', text: CLAIM_BY_ID_IN_EXECUTION, values: [...values, executionId] });
  return rows[0];
}

/**
 * Claims up to `max` commands, oldest first, skipping rows other claimers hold: those waiting for
 * a claim, and (with a `policy`) stranded ones the reaper marked and the policy lets go; `token`
 * names the claiming request.
 */
export async function claimNextCommands(q: Queryable, workerId: string, max: number, policy: ClaimPolicy | null, token: string | null = null): Promise<CommandRow[]> {
  if (max <= 0) return [];
  const { rows } = policy
    ? await q.query<CommandRow>({ name: 'svc_claim_next_or_stranded', text: CLAIM_NEXT_OR_STRANDED, values: [workerId, max, token, policy.staleSeconds, policy.hardTimeoutSeconds] })
    : await q.query<CommandRow>({ name: 'svc_claim_next', text: CLAIM_NEXT, values: [workerId, max, token] });
  return rows;
}

// Claimed and not started: the status a claim gives (reports move a started one on).
const CLAIMED_BY_REQUEST = `SELECT ${COMMAND_COLUMNS} FROM core.command c WHERE c.status = ${CLAIMED} AND c.worker_id = $1 AND c.claim_token = $2 ORDER BY c.command_id`;
// A listed command the pool no longer holds: cancelled, or taken over (the reaper republished it,
// another worker claimed it, or finished it).
const TO_STOP_AMONG = `SELECT command_id, c.status = ${CANCELLED} AS cancelled FROM core.command c
  WHERE c.command_id = ANY($1::bigint[]) AND (c.status = ${CANCELLED} OR NOT (${heldSql('c')} AND c.worker_id IS NOT DISTINCT FROM $2))`;

/**
 * Commands a worker's request (`token`) claimed that it has not started: what a lost answer
 * carried, for the same request sent again. Oldest first.
 */
export async function claimedByRequest(q: Queryable, workerId: string, token: string): Promise<CommandRow[]> {
  const { rows } = await q.query<CommandRow>(CLAIMED_BY_REQUEST, [workerId, token]);
  return rows;
}

/**
 * Of the commands pool `pool` says it runs, those it should stop: `cancelled` ones, and
 * `superseded` ones it no longer holds (taken over after it went silent: its report of them would
 * be refused, and running on meanwhile does their work twice at once).
 */
export async function toStopAmong(q: Queryable, ids: number[], pool: string): Promise<{ cancelled: number[]; superseded: number[] }> {
  if (!ids.length) return { cancelled: [], superseded: [] };
  const { rows } = await q.query<{ command_id: number; cancelled: boolean }>(TO_STOP_AMONG, [ids, pool]);
  return { cancelled: rows.filter((r) => r.cancelled).map((r) => r.command_id), superseded: rows.filter((r) => !r.cancelled).map((r) => r.command_id) };
}

/** Why the reaper republished a command. */
export type StrandedReason = 'pending_stale' | 'worker_missing' | 'worker_not_ready' | 'worker_stale' | 'orphaned' | 'hard_timeout';

export type StrandedCommand = { command_id: number; reason: StrandedReason };

const MARK_STRANDED = `WITH active AS (
       SELECT c.command_id, c.execution_id, c.attempt, c.reclaim_attempt IS NOT DISTINCT FROM c.attempt AS already_marked,
              CASE WHEN r.name IS NULL THEN CASE WHEN c.heartbeat_at < now() - make_interval(secs => $1) THEN 'worker_missing' END
                   WHEN r.status = 'stopped' THEN 'worker_not_ready'
                   WHEN r.heartbeat_at < now() - make_interval(secs => $1) THEN 'worker_stale'
                   WHEN r.held_at > c.claimed_at + make_interval(secs => $1) AND NOT c.command_id = ANY(r.held_commands) THEN 'orphaned'
                   WHEN c.claimed_at < now() - make_interval(secs => $2) THEN 'hard_timeout'
              END AS reason
         FROM core.command c LEFT JOIN core.runtime r ON r.kind = 'worker_pool' AND r.name = c.worker_id
        WHERE ${heldSql('c')}),
     -- A paused execution's claim is no claimer's to take (withdrawPausedClaims gives it back to the pause).
     claimable AS (SELECT * FROM active a WHERE ${notPausedSql('a')}),
     -- Unmarked ones first, a gone holder's before a hard timeout's: a marked claim waits for a
     -- claimer and a healthy holder may keep its claim for hours, and neither may take the places
     -- of claims nobody has marked yet.
     stranded AS (SELECT command_id, attempt, reason FROM claimable WHERE reason IS NOT NULL ORDER BY already_marked, reason = 'hard_timeout', command_id LIMIT $3),
     marked AS (
       UPDATE core.command c SET reclaim_attempt = c.attempt
         FROM stranded s
        WHERE c.command_id = s.command_id AND c.attempt = s.attempt AND ${heldSql('c')}
          AND c.reclaim_attempt IS DISTINCT FROM c.attempt)
     SELECT (SELECT count(*)::int FROM active) AS scanned, s.command_id, s.reason
       FROM (SELECT 1) one LEFT JOIN stranded s ON true`;

/**
 * The reaper's look at claimed commands: every CLAIMED/RUNNING row (command_active_idx; as many as
 * the pools hold), each with why it is stranded, if it is: its worker is missing from the registry
 * (and its claim heartbeat older than `staleSeconds`), stopped, silent for `staleSeconds`, or no
 * longer lists it (orphaned, see ClaimPolicy); or the claim is older than `hardTimeoutSeconds`.
 * Up to `max` stranded ones of executions not paused (unmarked before marked, a gone holder's
 * before a hard timeout's, then oldest first) are marked for the claim-next paths
 * (`reclaim_attempt`); returns them and how many rows were read. Nothing else changes.
 */
export async function markStrandedClaims(q: Queryable, p: { staleSeconds: number; hardTimeoutSeconds: number; max: number }): Promise<{ scanned: number; stranded: StrandedCommand[] }> {
  const { rows } = await q.query<{ scanned: number; command_id: number | null; reason: StrandedReason | null }>(MARK_STRANDED, [p.staleSeconds, p.hardTimeoutSeconds, p.max]);
  return {
    scanned: rows[0]?.scanned ?? 0,
    stranded: rows.flatMap((r) => (r.command_id !== null && r.reason !== null ? [{ command_id: r.command_id, reason: r.reason }] : [])),
  };
}

// The execution rows are locked (FOR SHARE) so a resume or cancel committing meanwhile is seen,
// never leaving a command withdrawn under a running execution; SKIP LOCKED on both: a sweep
// waits for no writer (and deadlocks with none), what it skips the next sweep finds.
const WITHDRAW_PAUSED = `WITH paused AS (
       SELECT e.execution_id FROM core.execution e
        WHERE e.status = 'paused'
          AND e.execution_id IN (SELECT c.execution_id FROM core.command c WHERE ${withdrawableSql('c')} AND ${claimTakeableSql('c', { stale: '$1::float8', hard: '$2::float8' })})
        FOR SHARE OF e SKIP LOCKED),
     gone AS (
       SELECT c.command_id FROM core.command c JOIN paused p ON p.execution_id = c.execution_id
        WHERE ${withdrawableSql('c')} AND ${claimTakeableSql('c', { stale: '$1::float8', hard: '$2::float8' })}
        ORDER BY c.command_id LIMIT $3 FOR UPDATE OF c SKIP LOCKED)
     UPDATE core.command c SET status = ${WITHDRAWN}, reclaim_attempt = NULL, updated_at = now()
       FROM gone g WHERE c.command_id = g.command_id
     RETURNING c.command_id`;

/**
 * The reaper's withdrawal of the claims of paused executions whose holder the claim `policy`
 * lets go: no claimer may take them while paused (a pause issues no command), so they are given
 * back to the pause (PAUSED, as migrations/0047 withdraws what nobody claimed; a limit's slot
 * freed), and the resume issues them again, once. Up to `max`; returns their ids.
 */
export async function withdrawPausedClaims(q: Queryable, policy: ClaimPolicy, max: number): Promise<number[]> {
  if (max <= 0) return [];
  const { rows } = await q.query<{ command_id: number }>(WITHDRAW_PAUSED, [policy.staleSeconds, policy.hardTimeoutSeconds, max]);
  return rows.map((r) => r.command_id);
}

// A status update (the same status) is what gives the slots back: the trigger of migrations/0054,
// 0055, which also gives back an ended execution's admission slot with its last marked command.
// Kept admissions no marked command holds any more (their execution deleted) go too.
const RELEASE_KEPT_SLOTS = `WITH released AS (
       UPDATE core.command c SET status = c.status, updated_at = now()
        WHERE c.command_id IN (SELECT o.command_id FROM core.command o
                                WHERE o.held_after_cancel AND ${claimTakeableSql('o', { stale: '$1::float8', hard: '$2::float8' })}
                                ORDER BY o.command_id LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING c.command_id),
     unheld AS (
       DELETE FROM core.kept_admission ka
        WHERE NOT EXISTS (SELECT 1 FROM core.command c WHERE c.execution_id = ka.execution_id AND c.held_after_cancel))
     SELECT command_id FROM released`;

/**
 * The reaper's release of the slots that commands cancelled while a worker held them keep
 * (migrations/0054, 0055: their task limit's, and their ended execution's admission's), once the
 * holder's lease has expired as a claim's would (ClaimPolicy: its pool stopped, silent or no
 * longer listing it, or the claim older than `hardTimeoutSeconds`) and no report after the cancel
 * came. Up to `max` commands; returns their ids.
 */
export async function releaseKeptSlots(q: Queryable, p: { staleSeconds: number; hardTimeoutSeconds: number; max: number }): Promise<number[]> {
  if (p.max <= 0) return [];
  const { rows } = await q.query<{ command_id: number }>(RELEASE_KEPT_SLOTS, [p.staleSeconds, p.hardTimeoutSeconds, p.max]);
  return rows.map((r) => r.command_id);
}

const TOUCH_STALE_PENDING = `WITH oldest AS (SELECT command_id, published_at FROM core.command c WHERE ${claimableSql('c')} AND c.limit_name IS NULL ORDER BY priority DESC, command_id LIMIT $2),
     touched AS (
       UPDATE core.command c SET published_at = now()
         FROM oldest o
        WHERE c.command_id = o.command_id AND o.published_at < now() - make_interval(secs => $1) AND ${claimableSql('c')}
       RETURNING c.command_id)
     SELECT (SELECT count(*)::int FROM oldest) AS scanned, t.command_id FROM (SELECT 1) one LEFT JOIN touched t ON true`;

/**
 * The reaper's look at PENDING commands of no limit: the `max` first in claim order (command_pending_idx;
 * a limit's waiting commands are announced by the admitter when their key has room); those last
 * published over `retrySeconds` ago get `published_at` now (their notification goes out again).
 * Returns them and how many rows were read.
 */
export async function touchStalePending(q: Queryable, p: { retrySeconds: number; max: number }): Promise<{ scanned: number; republished: number[] }> {
  if (p.max <= 0) return { scanned: 0, republished: [] };
  const { rows } = await q.query<{ scanned: number; command_id: number | null }>(TOUCH_STALE_PENDING, [p.retrySeconds, p.max]);
  return { scanned: rows[0]?.scanned ?? 0, republished: rows.flatMap((r) => (r.command_id !== null ? [r.command_id] : [])) };
}
