import { claimableSql, KEY_ROOM, waitingKeys } from './command-plans.ts';
import type { Db } from './db.ts';
import type { Queryable } from './queryable.ts';

// Flow control's SQL (DESIGN.md "Flow control"): named limits (core.flow_limit, written here
// only), what their keys hold, the admitter's statement and a debounce window's extension. The
// claim's share is in command-plans.ts; the unit write queues admissions and ends them.

/**
 * SQL condition: command `o` is a paused execution's, withdrawn while it waited (PAUSED:
 * migrations/0047). Its resume makes it PENDING again on its key's row, which no claim does
 * without (it joins the key): such a key is not idle, nor its limit deletable (migrations/0056).
 */
const pausedSql = (o: string): string => `${o}.status = 'PAUSED' AND ${o}.limit_name IS NOT NULL`;

/**
 * SQL condition: admission `a`'s execution is not paused. A queued execution paused keeps its row
 * (its place in the queue) but is passed over until its resume: it takes no slot and holds no
 * key's turn. One probe of the execution's primary key, only for admissions that wait.
 */
const unpausedSql = (a: string): string => `NOT EXISTS (SELECT 1 FROM core.execution pe WHERE pe.execution_id = ${a}.execution_id AND pe.status = 'paused')`;

/** A token bucket: `limit` tokens per `period_seconds`, holding at most `burst`. */
export type RateSpec = { limit: number; period_seconds: number; burst: number };

/** A named limit as stored and answered. */
export type FlowLimit = { name: string; concurrency: number | null; rate: RateSpec | null; created_at: Date; updated_at: Date };

/** What one key of a limit holds now: slots taken, executions queued, commands waiting, tokens in its bucket (null: no rate). */
export type FlowKeyState = { key: string; running: number; queued: number; waiting: number; tokens: number | null; served_at: Date | null };

type LimitRow = { name: string; concurrency: number | null; rate_limit: number | null; period_seconds: number | null; burst: number | null; created_at: Date; updated_at: Date };

const LIMIT_COLUMNS = 'name, concurrency, rate_limit, period_seconds, burst, created_at, updated_at';

function limitOf(r: LimitRow): FlowLimit {
  const rate = r.rate_limit !== null && r.period_seconds !== null && r.burst !== null ? { limit: r.rate_limit, period_seconds: r.period_seconds, burst: r.burst } : null;
  return { name: r.name, concurrency: r.concurrency, rate, created_at: r.created_at, updated_at: r.updated_at };
}

/** Creates or replaces a limit; `created` false when it existed (the caller wakes claimers: a larger limit may have room now). */
export async function putLimit(q: Queryable, name: string, concurrency: number | null, rate: RateSpec | null): Promise<{ limit: FlowLimit; created: boolean }> {
  const { rows } = await q.query<LimitRow & { created: boolean }>({
    name: 'svc_put_limit',
    text: `INSERT INTO core.flow_limit AS l (name, concurrency, rate_limit, period_seconds, burst) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (name) DO UPDATE SET concurrency = EXCLUDED.concurrency, rate_limit = EXCLUDED.rate_limit,
                  period_seconds = EXCLUDED.period_seconds, burst = EXCLUDED.burst, updated_at = now()
           RETURNING ${LIMIT_COLUMNS}, (xmax = 0) AS created`,
    values: [name, concurrency, rate?.limit ?? null, rate?.period_seconds ?? null, rate?.burst ?? null],
  });
  const { created, ...row } = rows[0];
  return { limit: limitOf(row), created };
}

/** Every named limit, by name. */
export async function listLimits(q: Queryable): Promise<FlowLimit[]> {
  const { rows } = await q.query<LimitRow>({ name: 'svc_list_limits', text: `SELECT ${LIMIT_COLUMNS} FROM core.flow_limit ORDER BY name`, values: [] });
  return rows.map(limitOf);
}

/** One named limit, or undefined. */
export async function getLimit(q: Queryable, name: string): Promise<FlowLimit | undefined> {
  const { rows } = await q.query<LimitRow>({ name: 'svc_get_limit', text: `SELECT ${LIMIT_COLUMNS} FROM core.flow_limit WHERE name = $1`, values: [name] });
  return rows[0] && limitOf(rows[0]);
}

/**
 * Each key of limit `name` with what it holds (at most `max`, busiest first: the most running,
 * queued and waiting together, then the most running): its slots taken, executions queued
 * (core.admission), commands waiting (PENDING of the limit) and tokens now. Queued and waiting
 * count in the order: a key that holds nothing while its work waits (a limit not defined yet, a
 * rate out of tokens) is not cut from the page behind idle keys, which stay for a day.
 */
export async function limitKeys(q: Queryable, name: string, max: number): Promise<FlowKeyState[]> {
  const { rows } = await q.query<FlowKeyState>({
    name: 'svc_limit_keys',
    text: `WITH queued AS (SELECT a.limit_key AS key, count(*)::int AS n FROM core.admission a
                            WHERE a.limit_name = $1 AND a.admitted_at IS NULL GROUP BY a.limit_key),
                waiting AS (SELECT o.limit_key AS key, count(*)::int AS n FROM core.command o
                             WHERE o.limit_name = $1 AND ${claimableSql('o')} GROUP BY o.limit_key)
           SELECT k.key, k.running, COALESCE(qd.n, 0) AS queued, COALESCE(wt.n, 0) AS waiting,
                  r.tokens, NULLIF(k.served_at, '-infinity') AS served_at
             FROM core.flow_key k LEFT JOIN core.flow_limit l ON l.name = k.name
             LEFT JOIN queued qd ON qd.key = k.key LEFT JOIN waiting wt ON wt.key = k.key
             CROSS JOIN LATERAL (SELECT ${KEY_ROOM}) r
            WHERE k.name = $1
            ORDER BY k.running + COALESCE(qd.n, 0) + COALESCE(wt.n, 0) DESC, k.running DESC, k.key LIMIT $2`,
    values: [name, max],
  });
  return rows;
}

/** Totals over every key of each limit name (defined or only named by playbooks), and an inline limit's N (`capacity`): for the list. */
export async function limitTotals(q: Queryable): Promise<Map<string, { keys: number; running: number; queued: number; waiting: number; capacity: number | null }>> {
  const { rows } = await q.query<{ name: string; keys: number; running: number; queued: number; waiting: number; capacity: number | null }>({
    name: 'svc_limit_totals',
    text: `SELECT k.name, count(*)::int AS keys, sum(k.running)::int AS running, max(k.capacity) AS capacity,
                  (SELECT count(*)::int FROM core.admission a WHERE a.limit_name = k.name AND a.admitted_at IS NULL) AS queued,
                  (SELECT count(*)::int FROM core.command o WHERE o.limit_name = k.name AND ${claimableSql('o')}) AS waiting
             FROM core.flow_key k GROUP BY k.name`,
    values: [],
  });
  return new Map(rows.map((r) => [r.name, { keys: r.keys, running: r.running, queued: r.queued, waiting: r.waiting, capacity: r.capacity }]));
}

/** A limit the newest version of a playbook names: a name (`name`), or its inline `concurrency: {limit: N}` (`inline_path`, `capacity` N). */
export type LimitUse = { name: string; inline_path: null; capacity: null } | { name: null; inline_path: string; capacity: number };

/**
 * The limits the newest version of each playbook names, whether or not anybody defined them or
 * work waits on them yet: its `concurrency.limit` (a name, or an inline N) and its tasks'
 * `limit.name`. Names once, each inline limit with its playbook's path and N.
 */
export async function limitsUsed(q: Queryable): Promise<LimitUse[]> {
  const { rows } = await q.query<LimitUse>({
    name: 'svc_limits_used',
    text: `WITH head AS (SELECT DISTINCT ON (path) path, payload FROM core.catalog WHERE kind = 'playbook' ORDER BY path, version DESC),
                used AS (SELECT h.path, u.l FROM head h CROSS JOIN LATERAL jsonb_path_query(h.payload, 'lax $.concurrency.limit') u(l)
                         UNION ALL
                         SELECT h.path, u.l FROM head h CROSS JOIN LATERAL jsonb_path_query(h.payload, 'lax $.workflow[*].tasks[*].limit.name') u(l))
           SELECT DISTINCT u.l #>> '{}' AS name, NULL::text AS inline_path, NULL::int AS capacity FROM used u WHERE jsonb_typeof(u.l) = 'string'
           UNION ALL
           SELECT NULL, u.path, u.l::int FROM used u WHERE jsonb_typeof(u.l) = 'number'`,
    values: [],
  });
  return rows;
}

/**
 * Deletes limit `name` unless a key of it holds a slot, queues an execution or has a command
 * waiting (`inUse`); its idle keys go with it. `deleted` false when it was not (in use, or none).
 * Its keys are locked first; one that a limited command's insert holds (migrations/0032) means
 * work is being queued on it now: in use. The check, a statement later, sees every command
 * committed before the lock. (Skipping, not waiting: inserts lock their keys in no set order.)
 */
export async function deleteLimit(db: Db, name: string): Promise<{ deleted: boolean; inUse: boolean }> {
  return db.tx(async (q) => {
    const { rows: [lock] } = await q.query<{ held: boolean }>({
      name: 'svc_limit_keys_lock',
      text: `WITH locked AS (SELECT 1 FROM core.flow_key k WHERE k.name = $1 FOR UPDATE SKIP LOCKED)
             SELECT (SELECT count(*) FROM locked) < (SELECT count(*) FROM core.flow_key k WHERE k.name = $1) AS held`,
      values: [name],
    });
    if (lock.held) return { deleted: false, inUse: true };
    const { rows } = await q.query<{ deleted: boolean; in_use: boolean }>({
      name: 'svc_delete_limit',
      text: `WITH busy AS (
               SELECT EXISTS (SELECT 1 FROM core.flow_key k WHERE k.name = $1 AND k.running > 0)
                   OR EXISTS (SELECT 1 FROM core.admission a WHERE a.limit_name = $1 AND a.admitted_at IS NULL)
                   OR EXISTS (SELECT 1 FROM core.command o WHERE o.limit_name = $1 AND ${claimableSql('o')})
                   OR EXISTS (SELECT 1 FROM core.command o WHERE o.limit_name = $1 AND ${pausedSql('o')}) AS in_use),
             gone AS (DELETE FROM core.flow_limit l WHERE l.name = $1 AND NOT (SELECT in_use FROM busy) RETURNING l.name),
             keys AS (DELETE FROM core.flow_key k WHERE k.name = $1 AND EXISTS (SELECT 1 FROM gone))
             SELECT EXISTS (SELECT 1 FROM gone) AS deleted, (SELECT in_use FROM busy) AS in_use`,
      values: [name],
    });
    return { deleted: rows[0].deleted, inUse: rows[0].in_use };
  });
}

/**
 * A playbook registered with an inline `concurrency: {limit: N}` sets N on the keys its limit
 * `name` (`@<path>`) has: the change applies at once, as a PUT of a named limit does, and what is
 * queued on them is admitted up to it at the admitter's next look. (A key's N was otherwise
 * taken from the next admission made on it: queued work waited for another start to come.)
 */
export async function setInlineCapacity(q: Queryable, name: string, capacity: number): Promise<void> {
  await q.query({ name: 'svc_set_inline_capacity', text: 'UPDATE core.flow_key SET capacity = $2 WHERE name = $1 AND capacity IS DISTINCT FROM $2', values: [name, capacity] });
}

/** A key of a limit. */
export type FlowKeyName = { name: string; key: string };

/**
 * Forgets idle keys among the next `limit` after `after` (in name, key order): nothing held
 * (`running` 0), no claim or admission for `idleSeconds` (a key at rest that long has a full
 * bucket: KEY_ROOM), no command waiting (nor withdrawn by a pause) and no execution queued on it. The rows are locked first,
 * skipping those a command's insert holds (migrations/0032), and checked in a second statement,
 * whose snapshot sees every command committed before the lock. `last`: the last key looked at
 * (null: none was left).
 */
export async function forgetIdleFlowKeys(db: Db, idleSeconds: number, limit: number, after: FlowKeyName | null): Promise<{ forgotten: FlowKeyName[]; last: FlowKeyName | null }> {
  return db.tx(async (q) => {
    const { rows: idle } = await q.query<FlowKeyName>({
      name: 'svc_flow_keys_idle',
      text: `SELECT k.name, k.key FROM core.flow_key k
              WHERE k.running = 0 AND k.served_at < now() - make_interval(secs => $1::float8) AND k.refilled_at < now() - make_interval(secs => $1::float8)
                AND ($3::text IS NULL OR (k.name, k.key) > ($3, $4))
              ORDER BY k.name, k.key LIMIT $2 FOR UPDATE SKIP LOCKED`,
      values: [idleSeconds, limit, after?.name ?? null, after?.key ?? null],
    });
    if (!idle.length) return { forgotten: [], last: null };
    const { rows } = await q.query<FlowKeyName>({
      name: 'svc_flow_keys_forget',
      text: `DELETE FROM core.flow_key k USING unnest($1::text[], $2::text[]) AS x(name, key)
              WHERE k.name = x.name AND k.key = x.key AND k.running = 0
                AND NOT EXISTS (SELECT 1 FROM core.command o WHERE o.limit_name = k.name AND o.limit_key = k.key AND ${claimableSql('o')})
                AND NOT EXISTS (SELECT 1 FROM core.command o WHERE o.limit_name = k.name AND o.limit_key = k.key AND ${pausedSql('o')})
                AND NOT EXISTS (SELECT 1 FROM core.admission a WHERE a.limit_name = k.name AND a.limit_key = k.key AND a.admitted_at IS NULL)
              RETURNING k.name, k.key`,
      values: [idle.map((k) => k.name), idle.map((k) => k.key)],
    });
    return { forgotten: rows, last: idle.at(-1) ?? null };
  });
}

/** A concurrency limit's key a start may be admitted on at once, and the inline limit's N (`capacity`). */
export type AdmitKey = { limit: string; key: string; capacity: number | null };

/**
 * How many starts each key can admit at once (read before a start's fold): its free slots; 0 when
 * an execution is queued on it (`queued`: those go first), its limit has a rate (tokens are the
 * admitter's) or is not defined. An inline limit's N is its playbook's newest version's, not the
 * starting version's (migrations/0053). The start's write takes the slots under the same conditions
 * (migrations/0028) or fails, so a room read here that another writer took first is never overrun.
 */
export async function startRooms(q: Queryable, keys: readonly AdmitKey[]): Promise<{ limit: string; key: string; room: number; queued: boolean }[]> {
  const { rows } = await q.query<{ limit: string; key: string; room: number; queued: boolean }>({
    name: 'svc_start_rooms',
    text: `SELECT x.name AS limit, x.key, q.queued,
                  CASE WHEN l.rate_limit IS NOT NULL OR q.queued THEN 0
                       ELSE GREATEST(0, COALESCE(CASE WHEN l.name IS NULL THEN core.svc_inline_capacity(x.name, x.capacity) ELSE l.concurrency END, 0) - COALESCE(k.running, 0)) END AS room
             FROM unnest($1::text[], $2::text[], $3::int[]) AS x(name, key, capacity)
             LEFT JOIN core.flow_limit l ON l.name = x.name
             LEFT JOIN core.flow_key k ON k.name = x.name AND k.key = x.key
            CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM core.admission a WHERE a.limit_name = x.name AND a.limit_key = x.key AND a.admitted_at IS NULL) AS queued) q`,
    values: [keys.map((k) => k.limit), keys.map((k) => k.key), keys.map((k) => k.capacity)],
  });
  return rows;
}

/**
 * `FROM ... WHERE` of the admissions to route again: admitted over `strayMs` (the parameter `param`)
 * ago and still queued (the server that admitted them stopped before routing). `a` is the admission.
 */
const strayAdmissions = (param: string) => `FROM core.admission a JOIN core.execution e ON e.execution_id = a.execution_id
              WHERE a.admitted_at < now() - make_interval(secs => ${param}::float8 / 1000) AND e.status = 'queued'`;

/**
 * An execution the admitter admitted (or admitted before and whose admission was not routed): the
 * limit, key and priority it was admitted with (a debounced one's are its burst's last start's),
 * its debounced payload, if any, and `admitted_at`, the time its admission took its slot and token.
 */
export type Admitted = { execution_id: number; limit_name: string | null; limit_key: string | null; priority: number; args: Record<string, unknown> | null; queued_ms: number; admitted_at: Date; again: boolean };

/**
 * The admitter's one statement: admits up to `max` queued executions whose window closed and that
 * are not paused (a paused one keeps its place, passed over: it holds back no other), those of no
 * limit by priority then age, those of a limit per key with room (the least recently served keys
 * first, each key as many as its room, by priority then age), counting their slots and tokens
 * in the same statement; rows and keys other admitters hold are skipped. Also answers, `again`,
 * executions admitted over `strayMs` ago that are still queued (their admission was never routed:
 * the server that admitted them stopped), to route again.
 */
export async function admitQueued(q: Queryable, max: number, strayMs: number): Promise<Admitted[]> {
  const { rows } = await q.query<Admitted & { execution_id: string | number }>({
    name: 'svc_admit_queued',
    text: `WITH RECURSIVE free AS (
             -- Age is when it was queued, not its id: ids come in blocks per server (migrations/0046).
             SELECT a.execution_id, NULL::text AS limit_name, NULL::text AS limit_key FROM core.admission a
              WHERE a.admitted_at IS NULL AND a.limit_name IS NULL AND a.not_before <= now() AND ${unpausedSql('a')}
              ORDER BY a.priority DESC, a.created_at, a.execution_id LIMIT $1 FOR UPDATE SKIP LOCKED),
           ${waitingKeys('waiting', 'core.admission', `o.admitted_at IS NULL AND o.limit_name IS NOT NULL AND ${unpausedSql('o')}`)},
           keys AS (
             SELECT k.name, k.key, r.room, r.tokens FROM waiting w
               JOIN core.flow_key k ON k.name = w.limit_name AND k.key = w.limit_key LEFT JOIN core.flow_limit l ON l.name = k.name
              CROSS JOIN LATERAL (SELECT ${KEY_ROOM}) r
              CROSS JOIN LATERAL (SELECT a.priority FROM core.admission a
                                   WHERE a.limit_name = k.name AND a.limit_key = k.key AND a.admitted_at IS NULL AND a.not_before <= now() AND ${unpausedSql('a')}
                                   ORDER BY a.priority DESC, a.created_at, a.execution_id LIMIT 1) top
              WHERE r.room > 0
              -- NO KEY UPDATE: not skipped for a limited command's insert, which holds the key FOR KEY SHARE (migrations/0032).
              ORDER BY top.priority DESC, k.served_at LIMIT $1 FOR NO KEY UPDATE OF k SKIP LOCKED),
           limited AS (
             SELECT a.execution_id, k.name AS limit_name, k.key AS limit_key FROM keys k
              CROSS JOIN LATERAL (SELECT a.execution_id FROM core.admission a
                                   WHERE a.limit_name = k.name AND a.limit_key = k.key AND a.admitted_at IS NULL AND a.not_before <= now() AND ${unpausedSql('a')}
                                   ORDER BY a.priority DESC, a.created_at, a.execution_id LIMIT k.room FOR UPDATE SKIP LOCKED) a),
           picked AS (SELECT * FROM free UNION ALL SELECT * FROM limited LIMIT $1),
           -- As the claim counts (src/db/command-plans.ts): a fraction of a token left is dropped.
           counted AS (
             UPDATE core.flow_key k
                SET running = k.running + t.n, tokens = CASE WHEN kk.tokens IS NULL THEN NULL ELSE floor(kk.tokens - t.n) END, refilled_at = now(), served_at = clock_timestamp()
               FROM (SELECT limit_name, limit_key, count(*)::int AS n FROM picked WHERE limit_name IS NOT NULL GROUP BY 1, 2) t
               JOIN keys kk ON kk.name = t.limit_name AND kk.key = t.limit_key
              WHERE k.name = t.limit_name AND k.key = t.limit_key),
           marked AS (
             UPDATE core.admission a SET admitted_at = now() FROM picked p WHERE a.execution_id = p.execution_id
             RETURNING a.execution_id, a.limit_name, a.limit_key, a.priority, a.args, (extract(epoch FROM now() - a.created_at) * 1000)::float8 AS queued_ms, a.admitted_at, false AS again),
           strays AS (
             SELECT a.execution_id, a.limit_name, a.limit_key, a.priority, a.args, 0::float8 AS queued_ms, a.admitted_at, true AS again
               ${strayAdmissions('$2')} LIMIT $1)
           SELECT * FROM marked UNION ALL SELECT * FROM strays`,
    values: [max, strayMs],
  });
  return rows.map((r) => ({ ...r, execution_id: Number(r.execution_id) }));
}

/**
 * A CTE `name(name, key, ms)`: each rate-limited key of `waiting` (keys with work waiting) with a
 * free slot, and how soon it gets a token (ms from now; 0: it has one).
 */
const refills = (name: string, waiting: string) => `${name}(name, key, ms) AS (
                   SELECT k.name, k.key, GREATEST(0, (1 - r.tokens) * l.period_seconds / l.rate_limit * 1000)::float8
                     FROM ${waiting} w
                     JOIN core.flow_key k ON k.name = w.limit_name AND k.key = w.limit_key JOIN core.flow_limit l ON l.name = k.name
                     CROSS JOIN LATERAL (SELECT ${KEY_ROOM}) r
                    WHERE l.rate_limit IS NOT NULL AND (l.concurrency IS NULL OR k.running < l.concurrency))`;

/** Who the admitter tells of what, and when it looks again: nextAdmitterLook's answer. */
export type AdmitterLook = {
  /** The soonest a rate-limited key with commands waiting on it and no token now gets one back (ms from now; null: none waits for one): the claimers' to take. */
  room: number | null;
  /** The rate-limited keys with commands waiting on them that have a token now, each as `<limit>\n<key>` (a limit name has no newline). */
  roomKeys: string[];
  /** The same as `room` for a key with executions due for admission: the admitter's own. */
  admit: number | null;
  /** The earliest debounce window still open (ms from now; null: none). */
  debounce: number | null;
  /** Whether any execution (not paused) waits to be admitted at all, or an admission older than `strayMs` to be routed again (admitQueued's strays). */
  queued: boolean;
  /** The limits that have a rate. */
  rates: string[];
  /** Every limit defined. */
  limits: string[];
  /** The limits with executions due for admission (queued, no debounce window open). */
  queuedLimits: string[];
};

/** When the admitter looks next, and which keys' claimers it tells of room, in one statement; `strayMs` as admitQueued's. */
export async function nextAdmitterLook(q: Queryable, strayMs: number): Promise<AdmitterLook> {
  const { rows } = await q.query<{ room_ms: number | null; room_keys: string[]; admit_ms: number | null; debounce_ms: number | null; queued: boolean; rates: string[]; limits: string[]; queued_limits: string[] }>({
    name: 'svc_next_admitter_look',
    text: `WITH RECURSIVE ${waitingKeys('commands', 'core.command', `${claimableSql('o')} AND o.limit_name IS NOT NULL`)},
           ${waitingKeys('admissions', 'core.admission', `o.admitted_at IS NULL AND o.limit_name IS NOT NULL AND o.not_before <= now() AND ${unpausedSql('o')}`)},
           ${refills('command_refills', 'commands')}, ${refills('admission_refills', 'admissions')}
           SELECT (SELECT min(ms) FROM command_refills WHERE ms > 0) AS room_ms,
                  ARRAY(SELECT name || E'\\n' || key FROM command_refills WHERE ms = 0 ORDER BY 1) AS room_keys,
                  (SELECT min(ms) FROM admission_refills) AS admit_ms,
                  -- No window open: NULL (GREATEST would make it 0: it skips NULLs, and the admitter would spin).
                  (SELECT (extract(epoch FROM min(not_before) - now()) * 1000)::float8
                     FROM core.admission a WHERE a.admitted_at IS NULL AND a.not_before > now() AND ${unpausedSql('a')}) AS debounce_ms,
                  -- Paused ones wait for their resume, which nudges its server's admitter (and the others' next look).
                  EXISTS (SELECT 1 FROM core.admission a WHERE a.admitted_at IS NULL AND ${unpausedSql('a')})
                    OR EXISTS (SELECT 1 ${strayAdmissions('$1')}) AS queued,
                  ARRAY(SELECT name FROM core.flow_limit WHERE rate_limit IS NOT NULL) AS rates,
                  ARRAY(SELECT name FROM core.flow_limit) AS limits,
                  ARRAY(SELECT DISTINCT limit_name FROM admissions) AS queued_limits`,
    values: [strayMs],
  });
  const r = rows[0];
  return {
    room: r?.room_ms ?? null,
    roomKeys: r?.room_keys ?? [],
    admit: r?.admit_ms ?? null,
    debounce: r?.debounce_ms === null || r?.debounce_ms === undefined ? null : Math.max(0, r.debounce_ms),
    queued: r?.queued ?? true,
    rates: r?.rates ?? [],
    limits: r?.limits ?? [],
    queuedLimits: r?.queued_limits ?? [],
  };
}

/**
 * What a later start of a debounce burst gives the open window it joins: its payload, and its own
 * concurrency limit and key (`limit` and `key` null: none), the inline limit's N (`capacity`) and
 * its priority. Its workload is the one that runs, so it is queued and admitted as its own start
 * would have been.
 */
export type DebounceJoin = { args: Record<string, unknown>; seconds: number; limit: string | null; key: string | null; capacity: number | null; priority: number };

/**
 * The catalog id (version) whose execution holds the open debounce window of `path` and `key`, or
 * null when none is open; the window's row is locked until the transaction ends.
 */
export async function openDebounceWindowCatalog(q: Queryable, path: string, key: string): Promise<number | null> {
  const { rows } = await q.query<{ catalog_id: string | number }>(
    `SELECT e.catalog_id FROM core.admission a JOIN core.execution e ON e.execution_id = a.execution_id
      WHERE a.debounce_path = $1 AND a.debounce_key = $2 AND a.admitted_at IS NULL AND NOT a.debounce_closed AND a.not_before > now()
      FOR UPDATE OF a`,
    [path, key],
  );
  return rows[0] ? Number(rows[0].catalog_id) : null;
}

/**
 * A later start of a debounce burst: the open window of `path` and `key` closes `seconds` from
 * now instead, and the execution waits with the later start's payload, concurrency key and
 * priority (a key's row is made for it as for a new admission: migrations/0040). The execution's
 * id and catalog id (the version it runs: a newer one may have been registered since the window
 * opened), or null when no window is open (the start opens one). A window that has closed (its
 * execution waits for room on its key) is not joined: it is marked closed, which takes it out of
 * the index of open windows (migrations/0044), so the start opens its own.
 */
export async function extendDebounce(q: Queryable, path: string, key: string, join: DebounceJoin): Promise<{ executionId: number; catalogId: number } | null> {
  const { rows } = await q.query<{ execution_id: string | number; catalog_id: string | number }>({
    name: 'svc_extend_debounce',
    text: `WITH closed AS (
             UPDATE core.admission a SET debounce_closed = true
              WHERE a.debounce_path = $1 AND a.debounce_key = $2 AND a.admitted_at IS NULL AND NOT a.debounce_closed AND a.not_before <= now())
           UPDATE core.admission a SET not_before = now() + make_interval(secs => $3::float8), args = $4::jsonb,
                  limit_name = $5, limit_key = $6, capacity = $7, priority = $8
             FROM core.execution e
            WHERE a.debounce_path = $1 AND a.debounce_key = $2 AND a.admitted_at IS NULL AND NOT a.debounce_closed AND a.not_before > now()
              AND e.execution_id = a.execution_id
            RETURNING a.execution_id, e.catalog_id`,
    values: [path, key, join.seconds, JSON.stringify(join.args), join.limit, join.key, join.capacity, join.priority],
  });
  return rows[0] ? { executionId: Number(rows[0].execution_id), catalogId: Number(rows[0].catalog_id) } : null;
}

/**
 * Takes the open debounce windows of `executionIds` out of reach of joins (`open: false`), or
 * gives them back (`open: true`, only those `closeDebounceWindows` took: the ids it answered).
 * A schedule's cancel_previous fire cancels the trigger's runs in the transaction that starts its
 * own: a window among them must not be joined by that start, which would be recorded as started
 * with the execution it cancels, so nothing would run.
 */
export async function setDebounceWindowsOpen(q: Queryable, executionIds: readonly number[], open: boolean): Promise<number[]> {
  if (executionIds.length === 0) return [];
  const { rows } = await q.query<{ execution_id: string | number }>(
    `UPDATE core.admission SET debounce_closed = NOT $2::boolean
      WHERE execution_id = ANY($1::bigint[]) AND admitted_at IS NULL AND debounce_path IS NOT NULL AND debounce_closed = $2::boolean
      RETURNING execution_id`,
    [executionIds, open],
  );
  return rows.map((r) => Number(r.execution_id));
}

const UNIQUE_VIOLATION = '23505';

/** True for the error of a start that opened a debounce window another start opened first (then it extends that one). */
export function isDebounceWindowTaken(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === UNIQUE_VIOLATION && 'constraint' in err && err.constraint === 'admission_debounce_key';
}
