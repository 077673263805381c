import { COMMAND_RULES } from '../../machines/command-rules.ts';
import type { CommandStatus } from '../../machines/command.machine.ts';

// The SQL of core.command in one place (as pg-boss keeps its in plans.ts): the column list, the
// status guards, generated from the command machine (machines/command-rules.ts) when this module
// loads, and the claim plan every claim path uses. A change of the machine's claim, reclaim or
// cancel changes these statements; the partial indexes of migrations 0001 and 0010 are written
// for today's sets (a unit test holds them together).

const COLUMNS = ['command_id', 'execution_id', 'catalog_id', 'seq', 'step', 'loop_index', 'status', 'attempt', 'worker_id', 'claim_token', 'input', 'claimed_at', 'heartbeat_at', 'created_at', 'issued_by_batch'];

/** The columns of a CommandRow, for SELECT and RETURNING lists. */
export const COMMAND_COLUMNS = COLUMNS.join(', ');

/** COMMAND_COLUMNS qualified by the alias `c` (a RETURNING beside other tables). */
export const COMMAND_COLUMNS_OF_C = COLUMNS.map((c) => `c.${c}`).join(', ');

/** COMMAND_COLUMNS without the input (NULL): routing never reads what the worker runs, the largest column. */
export const COMMAND_COLUMNS_NO_INPUT = COLUMNS.map((c) => (c === 'input' ? 'NULL::jsonb AS input' : c)).join(', ');

function literal(status: CommandStatus): string {
  if (!/^[A-Z_]+$/.test(status)) throw new Error(`not a command status: ${status}`);
  return `'${status}'`;
}

/** ` = 'A'` or ` IN ('A', 'B')` (the text the planner matches partial indexes on), to follow a column. */
function isOneOf(statuses: readonly CommandStatus[]): string {
  if (!statuses.length) throw new Error('an empty set of command statuses');
  return statuses.length === 1 ? ` = ${literal(statuses[0])}` : ` IN (${statuses.map(literal).join(', ')})`;
}

const CLAIMABLE = isOneOf(COMMAND_RULES.claim.from);
const RECLAIMABLE = isOneOf(COMMAND_RULES.reclaim.from);
const CANCELLABLE = isOneOf(COMMAND_RULES.cancel.from);

/** The status a claim gives (SQL literal). */
export const CLAIMED = literal(COMMAND_RULES.claim.to);
/** The status a cancel gives (SQL literal). */
export const CANCELLED = literal(COMMAND_RULES.cancel.to);

// The claim plan's one SET gives a claimed and a re-claimed row the same status.
if (COMMAND_RULES.reclaim.to !== COMMAND_RULES.claim.to) throw new Error('command machine: a reclaim must move to the status a claim does');

/** SQL condition: command `c` waits for a claim (the machine's claim takes it from this status). */
export const claimableSql = (c: string): string => `${c}.status${CLAIMABLE}`;

/** SQL condition: command `c` is held (the machine's reclaim may take it from its holder). */
export const heldSql = (c: string): string => `${c}.status${RECLAIMABLE}`;

/** SQL condition: command `c` may be cancelled (it is not over). */
export const cancellableSql = (c: string): string => `${c}.status${CANCELLABLE}`;

/** SQL expressions (parameters) of a claim policy's seconds: `stale`, and `hard`, which may be NULL. */
export type PolicySql = { stale: string; hard: string };

/**
 * SQL condition: the claim of held command `c` may be taken (ClaimPolicy, command.repo.ts): the
 * holder's pool is stopped, silent or no longer lists it, an unregistered claimer is silent, or
 * (with `hard`) the claim is older than that.
 */
export function claimTakeableSql(c: string, { stale, hard }: PolicySql): string {
  const staleAgo = `now() - make_interval(secs => ${stale})`;
  // Never NULL (a NULL `hard` or listing would make it so): callers also negate it.
  return `COALESCE(NOT EXISTS (SELECT 1 FROM core.runtime r WHERE r.kind = 'worker_pool' AND r.name = ${c}.worker_id) AND ${c}.heartbeat_at < ${staleAgo}
         OR EXISTS (SELECT 1 FROM core.runtime r WHERE r.kind = 'worker_pool' AND r.name = ${c}.worker_id
                     AND (r.status = 'stopped' OR r.heartbeat_at < ${staleAgo}
                          OR (r.held_at > ${c}.claimed_at + make_interval(secs => ${stale}) AND NOT ${c}.command_id = ANY(r.held_commands))))
         OR ${c}.claimed_at < now() - make_interval(secs => ${hard}), false)`;
}

/**
 * What a claim picks: one command by id (claimable, or held and let go by `policy`), or the
 * `limit` oldest claimable ones, and with `stranded` the held ones the reaper marked
 * (`command_reclaim_idx`) that it lets go (none while its `stale` is NULL: no policy given); `except` is a further condition on each (alias `o`).
 * Rows other claimers have locked are skipped.
 */
export type ClaimPick = { id: string; policy: PolicySql } | { limit: string; stranded: PolicySql | null; except?: string };

/**
 * Who gets them: one worker and its request's token (SQL expressions), or workers in turn by
 * row-number ranges (`ranges`: a jsonb of {worker_id, token, lo, hi}, oldest command first).
 */
export type ClaimTo = { worker: string; token: string } | { ranges: string };

/**
 * The claim, written once: the long poll, the claim by id and claim-ahead are this plan. Gives
 * the CTEs that pick the rows (named after `name`) and the UPDATE that claims them (a statement
 * of its own, or a data-modifying CTE of a larger one) returning `returning`. Each claim takes
 * the command for its claimer and bumps `attempt`, which fences off the reports of older claims.
 */
export function claimPlan(name: string, pick: ClaimPick, to: ClaimTo, returning: string): { ctes: string[]; update: string } {
  const worker = 'ranges' in to ? 'w.worker_id' : to.worker;
  const token = 'ranges' in to ? 'w.token' : to.token;
  const set = `SET status = ${CLAIMED}, worker_id = ${worker}, claim_token = ${token}, attempt = c.attempt + 1, claimed_at = now(), heartbeat_at = now(), updated_at = now()`;
  if ('id' in pick) {
    if ('ranges' in to) throw new Error('claimPlan: a claim by id has one claimer');
    return {
      ctes: [],
      update: `UPDATE core.command c
     ${set}
   WHERE c.command_id = ${pick.id} AND (${claimableSql('c')} OR (${heldSql('c')} AND ${claimTakeableSql('c', pick.policy)}))
  RETURNING ${returning}`,
    };
  }
  const except = pick.except ?? '';
  const pendingPick = `SELECT o.command_id FROM core.command o
                   WHERE ${claimableSql('o')}${except}
                   ORDER BY o.command_id LIMIT ${pick.limit} FOR UPDATE SKIP LOCKED`;
  if (!('ranges' in to) && !pick.stranded) {
    // A sub-select, not a CTE: PostgreSQL materialises a locking CTE, and the long poll's plan
    // reads the pending index straight into the update.
    return { ctes: [], update: `UPDATE core.command c\n     ${set}\n   WHERE c.command_id IN (${pendingPick})\n  RETURNING ${returning}` };
  }
  const pending = `${name}_pending`;
  const ctes = [`${pending} AS (${pendingPick})`];
  let candidates = pending;
  if (pick.stranded) {
    const stranded = `${name}_stranded`;
    ctes.push(`${stranded} AS (SELECT o.command_id FROM core.command o
                   WHERE ${pick.stranded.stale} IS NOT NULL AND ${heldSql('o')} AND o.reclaim_attempt = o.attempt AND ${claimTakeableSql('o', pick.stranded)}${except}
                   ORDER BY o.command_id LIMIT ${pick.limit} FOR UPDATE OF o SKIP LOCKED)`);
    candidates = `(SELECT command_id FROM ${pending} UNION ALL SELECT command_id FROM ${stranded})`;
  }
  if ('ranges' in to) {
    return {
      ctes,
      update: `UPDATE core.command c
     ${set}
    FROM (SELECT o.command_id, row_number() OVER (ORDER BY o.command_id) AS rn
            FROM ${candidates} o) picked
    JOIN jsonb_to_recordset(${to.ranges}) AS w(worker_id text, token text, lo int, hi int) ON picked.rn BETWEEN w.lo AND w.hi
   WHERE c.command_id = picked.command_id
  RETURNING ${returning}`,
    };
  }
  return {
    ctes,
    update: `UPDATE core.command c
     ${set}
   WHERE c.command_id IN (SELECT command_id FROM ${candidates} u ORDER BY command_id LIMIT ${pick.limit})
  RETURNING ${returning}`,
  };
}
