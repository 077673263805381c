import { COMMAND_RULES } from '../../machines/command-rules.ts';
import type { CommandStatus } from '../../machines/command.machine.ts';
import { inlineLimitName } from '../flow/limit-name.ts';

// The SQL of core.command in one place (as pg-boss keeps its in plans.ts): the column list, the
// status guards, generated from the command machine (machines/command-rules.ts) when this module
// loads, and the claim plan every claim path uses. A change of the machine's claim, reclaim or
// cancel changes these statements; the partial indexes of migrations 0001 and 0010 are written
// for today's sets (a unit test holds them together).

const COLUMNS = ['command_id', 'execution_id', 'catalog_id', 'seq', 'step', 'loop_index', 'status', 'attempt', 'worker_id', 'claim_token', 'input', 'claimed_at', 'heartbeat_at', 'created_at', 'issued_by_batch', 'priority', 'limit_name', 'limit_key', 'report_id'];

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
const WITHDRAWABLE = isOneOf(COMMAND_RULES.withdraw.from);

/** The status a claim gives (SQL literal). */
export const CLAIMED = literal(COMMAND_RULES.claim.to);
/** The status a cancel gives (SQL literal). */
export const CANCELLED = literal(COMMAND_RULES.cancel.to);
/** The status a withdrawal gives (SQL literal): the one a pause gives what nobody holds. */
export const WITHDRAWN = literal(COMMAND_RULES.withdraw.to);

// The claim plan's one SET gives a claimed and a re-claimed row the same status.
if (COMMAND_RULES.reclaim.to !== COMMAND_RULES.claim.to) throw new Error('command machine: a reclaim must move to the status a claim does');

/** SQL condition: command `c` waits for a claim (the machine's claim takes it from this status). */
export const claimableSql = (c: string): string => `${c}.status${CLAIMABLE}`;

/** SQL condition: command `c` is held (the machine's reclaim may take it from its holder). */
export const heldSql = (c: string): string => `${c}.status${RECLAIMABLE}`;

/** SQL condition: command `c` is held and may be given back to its execution's pause (the machine's withdraw). */
export const withdrawableSql = (c: string): string => `${c}.status${WITHDRAWABLE}`;

/** SQL condition: command `c` may be cancelled (it is not over). */
export const cancellableSql = (c: string): string => `${c}.status${CANCELLABLE}`;

/** SQL expressions (parameters) of a claim policy's seconds: `stale`, and `hard`, which may be NULL. */
export type PolicySql = { stale: string; hard: string };

/**
 * SQL condition: command `c`'s execution is not paused. A held claim the policy lets another
 * worker take runs its task again: while paused that waits for the resume, as a command no worker
 * claimed does (withdrawn, migrations/0047), since a pause issues no command.
 */
export const notPausedSql = (c: string): string => `NOT EXISTS (SELECT 1 FROM core.execution pe WHERE pe.execution_id = ${c}.execution_id AND pe.status = 'paused')`;

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

/** No bound (a limit without concurrency, or without a rate): larger than any claim's LIMIT. */
const UNBOUNDED = 2147483647;

/**
 * Whether the limit named by column `name` is defined (a row of core.flow_limit), or needs no row:
 * none named, or a playbook's inline limit (src/flow/limit-name.ts), which names no defined one.
 */
export const limitDefinedSql = (name: string): string =>
  `(${name} IS NULL OR ${name} LIKE '${inlineLimitName('')}%' OR EXISTS (SELECT 1 FROM core.flow_limit d WHERE d.name = ${name}))`;

/**
 * The room of flow key `k` (core.flow_key) of limit `l` (core.flow_limit, LEFT JOINed: NULL when
 * the key is an inline limit, or a named one not defined, which has no room until it is), as the
 * columns `room` and `tokens` (its bucket refilled to now; NULL: no rate). Shared by the claim and
 * the admitter (src/db/flow.repo.ts), which take from a key what its room allows. The bucket fills
 * up to `burst` only for a key at rest (nothing held, no claim for a period): while it is busy it
 * refills to one token at most, so a pause of slow claimers is not made up in a burst and no
 * period after the first holds more than `limit` claims. It never holds more than the limit's
 * `burst` as it is now: tokens a key kept from a larger burst (the limit was replaced since) are
 * not spent, since a change of a limit applies at once.
 */
export const KEY_ROOM = `r0.tokens, CASE WHEN l.name IS NULL AND k.capacity IS NULL THEN 0
                     ELSE LEAST(COALESCE(COALESCE(l.concurrency, k.capacity) - k.running, ${UNBOUNDED}), COALESCE(floor(r0.tokens)::int, ${UNBOUNDED})) END AS room
                   FROM (SELECT CASE WHEN l.rate_limit IS NULL THEN NULL
                                     ELSE LEAST(l.burst::float8,
                                                CASE WHEN k.tokens IS NULL OR (k.running = 0 AND now() - k.refilled_at >= make_interval(secs => l.period_seconds))
                                                     THEN l.burst::float8 ELSE GREATEST(1.0, k.tokens) END,
                                                COALESCE(k.tokens, l.burst::float8) + extract(epoch FROM now() - k.refilled_at) * l.rate_limit / l.period_seconds) END AS tokens) r0`;

/**
 * A recursive CTE `name(limit_name, limit_key)`: the distinct keys of the rows of `from` (alias
 * `o`) that match `where`, one index probe per key (a skip scan of an index on (limit_name,
 * limit_key, ...) whose predicate `where` repeats). The claim and the admitter start from the keys
 * that have work waiting, not from every key ever made: keys accumulate (one per tenant) and most
 * are idle. The statement must say WITH RECURSIVE.
 */
export function waitingKeys(name: string, from: string, where: string): string {
  const probe = (after: string) => `SELECT o.limit_name, o.limit_key FROM ${from} o WHERE ${where}${after} ORDER BY o.limit_name, o.limit_key LIMIT 1`;
  return `${name}(limit_name, limit_key) AS (
                   (${probe('')})
                   UNION ALL
                   SELECT n.limit_name, n.limit_key FROM ${name} w
                    CROSS JOIN LATERAL (${probe(' AND (o.limit_name, o.limit_key) > (w.limit_name, w.limit_key)')}) n)`;
}

/**
 * What a claim picks: one command by id (claimable and of no limit: a limit's commands are taken
 * only by the picks, which count them; or held and let go by `policy`), or the
 * `limit` oldest claimable ones, and with `stranded` the held ones the reaper marked
 * (`command_reclaim_idx`) that it lets go (none while its `stale` is NULL: no policy given); `except` is a further condition on each (alias `o`).
 * Rows other claimers have locked are skipped. `limited`: the commands of limits' keys with room
 * are picked too (the worker's claim); without it only commands of no limit (claim-ahead in the
 * unit write, whose every part PostgreSQL starts at each step: a limit's commands wait for the
 * workers' claims, woken when a key gets room).
 */
export type ClaimPick = { id: string; executionId?: string; policy: PolicySql } | { limit: string; stranded: PolicySql | null; except?: string; limited: boolean };

/**
 * Who gets them: one worker and its request's token (SQL expressions), or workers in turn by
 * row-number ranges (`ranges`: a jsonb of {worker_id, token, lo, hi}, oldest command first).
 */
export type ClaimTo = { worker: string; token: string } | { ranges: string };

/**
 * The column every claim returns beside the caller's: true when the claim took room (a slot, a
 * token) on its limit's key, i.e. the limited pick took it from PENDING and counted it; false for
 * a command of no limit and for a claim taken over from a lost holder, which kept its slot.
 * `attempt` cannot tell them: a claim withdrawn to a pause is claimed from PENDING at attempt 2.
 */
export const TOOK_ROOM = 'took_room';

/**
 * The claim, written once: the long poll, the claim by id and claim-ahead are this plan. Gives
 * the CTEs that pick the rows (named after `name`) and the UPDATE that claims them (a statement
 * of its own, or a data-modifying CTE of a larger one) returning `returning` and `took_room`
 * (TOOK_ROOM); with `limited`, one of the CTEs is recursive (the statement says WITH RECURSIVE).
 * Each claim takes the command for its claimer and bumps `attempt`, which fences off the reports
 * of older claims.
 */
export function claimPlan(name: string, pick: ClaimPick, to: ClaimTo, returning: string): { ctes: string[]; update: string } {
  const worker = 'ranges' in to ? 'w.worker_id' : to.worker;
  const token = 'ranges' in to ? 'w.token' : to.token;
  const set = `SET status = ${CLAIMED}, worker_id = ${worker}, claim_token = ${token}, report_id = NULL, attempt = c.attempt + 1, claimed_at = now(), heartbeat_at = now(), updated_at = now()`;
  if ('id' in pick) {
    if ('ranges' in to) throw new Error('claimPlan: a claim by id has one claimer');
    return {
      ctes: [],
      update: `UPDATE core.command c
     ${set}
   WHERE c.command_id = ${pick.id}${pick.executionId ? ` AND c.execution_id = ${pick.executionId}` : ''}
     AND ((${claimableSql('c')} AND c.limit_name IS NULL) OR (${heldSql('c')} AND ${claimTakeableSql('c', pick.policy)} AND ${notPausedSql('c')}))
  RETURNING ${returning}, false AS ${TOOK_ROOM}`,
    };
  }
  const except = pick.except ?? '';
  // Two picks, each by its index and skipping rows other claimers hold: commands of no limit, by
  // priority then age; and those of a limit's keys that have room now (concurrency and tokens),
  // the least recently served keys first, each key giving at most its room. A key another claim
  // holds is skipped, never waited for: a full or busy key blocks no other key's commands.
  const keys = `${name}_keys`;
  const free = `${name}_free`;
  const limited = `${name}_limited`;
  const freeOf = (columns: string) => `SELECT ${columns} FROM core.command o
                   WHERE ${claimableSql('o')} AND o.limit_name IS NULL${except}
                   ORDER BY o.priority DESC, o.command_id LIMIT ${pick.limit} FOR UPDATE SKIP LOCKED`;
  const freeColumns = 'o.command_id, o.priority, NULL::text AS limit_name, NULL::text AS limit_key';
  const ctes = pick.limited
    ? [
        `${free} AS (${freeOf(freeColumns)})`,
        waitingKeys(`${name}_waiting`, 'core.command', `${claimableSql('o')} AND o.limit_name IS NOT NULL`),
        // Of the keys with commands waiting: the one whose first has the highest priority first, then the least recently served.
        // NO KEY UPDATE (what counting `running` takes anyway): a limited command's insert holds its key FOR KEY SHARE (migrations/0032), which must not make claims skip the key.
        `${keys} AS (SELECT k.name, k.key, r.room, r.tokens FROM ${name}_waiting w
                   JOIN core.flow_key k ON k.name = w.limit_name AND k.key = w.limit_key LEFT JOIN core.flow_limit l ON l.name = k.name
                   CROSS JOIN LATERAL (SELECT ${KEY_ROOM}) r
                   CROSS JOIN LATERAL (SELECT o.priority FROM core.command o WHERE o.limit_name = k.name AND o.limit_key = k.key AND ${claimableSql('o')}
                                        ORDER BY o.priority DESC, o.command_id LIMIT 1) top
                   WHERE r.room > 0
                   ORDER BY top.priority DESC, k.served_at LIMIT ${pick.limit} FOR NO KEY UPDATE OF k SKIP LOCKED)`,
        `${limited} AS (SELECT o.command_id, o.priority, k.name AS limit_name, k.key AS limit_key FROM ${keys} k
                   CROSS JOIN LATERAL (SELECT o.command_id, o.priority FROM core.command o
                                        WHERE o.limit_name = k.name AND o.limit_key = k.key AND ${claimableSql('o')}${except}
                                        ORDER BY o.priority DESC, o.command_id LIMIT k.room FOR UPDATE SKIP LOCKED) o)`,
        // Priority first; then in turns across keys (the 1st of each key, then the 2nd, ...): round robin.
        `${name}_pending AS (SELECT u.command_id, 0 AS priority, u.limit_name, u.limit_key, row_number() OVER (ORDER BY u.priority DESC, u.turn, u.command_id) AS ord FROM (
                   SELECT c.*, row_number() OVER (PARTITION BY c.limit_name, c.limit_key ORDER BY c.priority DESC, c.command_id) AS turn
                     FROM (SELECT * FROM ${free} UNION ALL SELECT * FROM ${limited}) c) u
                   ORDER BY ord LIMIT ${pick.limit})`,
      ]
    : [`${name}_pending AS (${freeOf(`${freeColumns}, o.command_id AS ord`)})`];
  const pending = `${name}_pending`;
  // Held commands the reaper marked go first (they have waited longest), then the pending pick.
  const picked = `${name}_picked`;
  ctes.push(
    pick.stranded
      ? `${name}_stranded AS (SELECT o.command_id, NULL::text AS limit_name, NULL::text AS limit_key, 0 AS src, 0 AS priority, o.command_id AS ord FROM core.command o
                   WHERE ${pick.stranded.stale} IS NOT NULL AND ${heldSql('o')} AND o.reclaim_attempt = o.attempt AND ${claimTakeableSql('o', pick.stranded)} AND ${notPausedSql('o')}${except}
                   ORDER BY o.command_id LIMIT ${pick.limit} FOR UPDATE OF o SKIP LOCKED)`
      : `${name}_stranded AS (SELECT NULL::bigint AS command_id, NULL::text AS limit_name, NULL::text AS limit_key, 0 AS src, 0 AS priority, 0::bigint AS ord WHERE false)`,
    // The stranded first; then the pending pick's order (of no limit: priority, then age).
    `${picked} AS (SELECT s.command_id, s.limit_name, s.limit_key, row_number() OVER (ORDER BY s.src, s.priority DESC, s.ord) AS rn
                   FROM (SELECT command_id, limit_name, limit_key, src, priority, ord FROM ${name}_stranded
                         UNION ALL SELECT command_id, limit_name, limit_key, 1, priority, ord FROM ${pending}) s
                   ORDER BY rn LIMIT ${pick.limit})`,
  );
  if (pick.limited) {
    ctes.push(
    // What the pick takes from each key: its slots and tokens (its keys are locked by this statement).
    // The fraction of a token left is dropped: a claim that came late (the bucket refilled past 1
    // meanwhile) does not let the next one come early, so after the burst no `period` holds more
    // than `limit` claims however claimers lag.
      `${name}_counted AS (UPDATE core.flow_key k
                   SET running = k.running + t.n, tokens = CASE WHEN kk.tokens IS NULL THEN NULL ELSE floor(kk.tokens - t.n) END, refilled_at = now(), served_at = clock_timestamp()
                   FROM (SELECT limit_name, limit_key, count(*)::int AS n FROM ${picked} WHERE limit_name IS NOT NULL GROUP BY 1, 2) t
                   JOIN ${keys} kk ON kk.name = t.limit_name AND kk.key = t.limit_key
                   WHERE k.name = t.limit_name AND k.key = t.limit_key)`,
    );
  }
  if ('ranges' in to) {
    return {
      ctes,
      update: `UPDATE core.command c
     ${set}
    FROM ${picked}
    JOIN jsonb_to_recordset(${to.ranges}) AS w(worker_id text, token text, lo int, hi int) ON ${picked}.rn BETWEEN w.lo AND w.hi
   WHERE c.command_id = ${picked}.command_id
  RETURNING ${returning}, ${picked}.limit_name IS NOT NULL AS ${TOOK_ROOM}`,
    };
  }
  return {
    ctes,
    update: `UPDATE core.command c
     ${set}
   WHERE c.command_id IN (SELECT command_id FROM ${picked})
  RETURNING ${returning}, c.command_id IN (SELECT command_id FROM ${picked} WHERE limit_name IS NOT NULL) AS ${TOOK_ROOM}`,
  };
}
