import type { Db } from './db.ts';
import { LIVE_EXECUTION_SQL } from './sql-list.ts';
import type { Queryable } from './queryable.ts';
import { KEEP_RANGE_LAST_STATUSES } from './resource.repo.ts';

// The ranges of the partitioned event log (migrations/0023_event_partitions.sql): which exist,
// making the next ones, and retention's reads and drop of a whole range. The DDL itself is in the
// migration's two functions, called here with parameters.

/** The session advisory lock a partition run holds (migrate.ts holds 7_242_001). */
const PARTITION_RUN_LOCK_KEY = 7_242_032;

/**
 * Runs `work` holding the partition work's session advisory lock, on a connection of its own
 * kept for the run; undefined at once, without running it, while another run holds it. The lock
 * goes with its connection, so a server killed mid-run leaves none behind (unlike a lease row).
 */
export async function whilePartitionRunHeld<T>(db: Db, work: () => Promise<T>): Promise<T | undefined> {
  return db.withClient(async (c) => {
    // The connection is idle for the whole run: an idle_session_timeout set on the database or
    // the service's role would end its session, and the lock with it, while the run still
    // archives, and a second run would start on the same range. Off for this session only, and
    // set back before the connection returns to the pool.
    await c.query(`SELECT set_config('idle_session_timeout', '0', false)`);
    try {
      const { rows } = await c.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1) AS got', [PARTITION_RUN_LOCK_KEY]);
      if (!rows[0].got) return undefined;
      try {
        return await work();
      } finally {
        await c.query('SELECT pg_advisory_unlock($1)', [PARTITION_RUN_LOCK_KEY]).catch(() => {});
      }
    } finally {
      await c.query('RESET idle_session_timeout').catch(() => {});
    }
  });
}

/** A range [lo, hi) of execution ids: one partition of core.event. */
export type EventRange = { lo: number; hi: number };

/** The ranges of core.event, in order (the default partition is not one). */
export async function eventRanges(q: Queryable): Promise<EventRange[]> {
  const { rows } = await q.query<{ bound: string | null }>({
    name: 'svc_event_ranges',
    text: `SELECT pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'core.event'::regclass`,
    values: [],
  });
  const ranges: EventRange[] = [];
  for (const r of rows) {
    // A read that waited for another transaction's DDL on the log sees the ranges it dropped with
    // no bound (a torn read of the catalog): the caller's run fails, the next reads them whole.
    if (r.bound === null) throw new Error('the event log ranges changed while they were read; read them again');
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
    if (m) ranges.push({ lo: Number(m[1]), hi: Number(m[2]) });
  }
  return ranges.sort((a, b) => a.lo - b.lo);
}

/** The last execution id the sequence handed out (0: none yet), as an SQL expression. */
const LAST_EXECUTION_ID = `(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM core.execution_id_seq)`;

/** The last execution id handed out (0: none yet). */
export async function lastExecutionId(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ last: string }>({ name: 'svc_last_execution_id', text: `SELECT ${LAST_EXECUTION_ID} AS last`, values: [] });
  return Number(rows[0].last);
}

/** Makes the range [lo, hi), moving in what the default partition took for it; false when it existed. */
export async function createEventRange(q: Queryable, r: EventRange): Promise<boolean> {
  const { rows } = await q.query<{ made: boolean }>({ name: 'svc_event_range_create', text: `SELECT core.svc_event_partition_create($1, $2) AS made`, values: [r.lo, r.hi] });
  return rows[0].made;
}

/**
 * Whether range `r` may go, and why not: `open` (an id in it is still to be handed out, or was
 * handed out less than `heldMs` ago: a server may hold it unused that long, then start an
 * execution with it), `recent`
 * (an execution in it finished less than `days` ago), `unfinished` (one has not finished),
 * `parent` (an execution in another range is a child of one in it: that child's range goes
 * first; ids come in blocks per server, so the child's range may be an earlier one), else `expired`.
 */
export type RangeVerdict = 'open' | 'recent' | 'unfinished' | 'parent' | 'expired';

/**
 * The verdict on range `r` for a retention of `days` (RangeVerdict), with ids held unused for at
 * most `heldMs` by the server that fetched them (a block, used lowest first). An id held in a
 * range with executions was fetched with one of them, which started after it and finished `days`
 * ago; a range with none may be all held ids, fetched no later than an execution past it started:
 * one that started `heldMs` ago shows them let go.
 */
export async function rangeVerdict(q: Queryable, r: EventRange, days: number, heldMs: number): Promise<RangeVerdict> {
  const { rows } = await q.query<{ verdict: RangeVerdict }>({
    name: 'svc_event_range_verdict',
    text: `SELECT CASE
              WHEN $2::bigint - 1 > ${LAST_EXECUTION_ID} THEN 'open'
              WHEN NOT EXISTS (SELECT 1 FROM core.execution x WHERE x.execution_id >= $1 AND x.execution_id < $2)
               AND NOT EXISTS (SELECT 1 FROM core.execution x WHERE x.execution_id >= $2
                                  AND x.started_at < now() - make_interval(secs => $4::float8 / 1000)) THEN 'open'
              WHEN EXISTS (SELECT 1 FROM core.execution e WHERE e.execution_id >= $1 AND e.execution_id < $2
                              AND e.finished_at > now() - make_interval(secs => $3::float8 * 86400)) THEN 'recent'
              WHEN EXISTS (SELECT 1 FROM core.execution e WHERE e.execution_id >= $1 AND e.execution_id < $2
                              AND e.status IN ${LIVE_EXECUTION_SQL}) THEN 'unfinished'
              WHEN EXISTS (SELECT 1 FROM core.execution c WHERE c.parent_execution_id >= $1 AND c.parent_execution_id < $2
                              AND (c.execution_id >= $2 OR c.execution_id < $1)) THEN 'parent'
              ELSE 'expired' END AS verdict`,
    values: [r.lo, r.hi, days, heldMs],
  });
  return rows[0].verdict;
}

/**
 * The ranges of `among` other than `r` that hold a child of an execution of `r` (retention drops
 * such ranges together when they hold each other's children); null when such a child is in none
 * of them (the default partition, or the newest range, left out of `among`).
 */
export async function childRanges(q: Queryable, r: EventRange, among: readonly EventRange[]): Promise<EventRange[] | null> {
  const { rows } = await q.query<{ lo: string | null; hi: string | null }>({
    name: 'svc_event_child_ranges',
    text: `SELECT DISTINCT b.lo, b.hi FROM core.execution c
             LEFT JOIN unnest($3::bigint[], $4::bigint[]) AS b (lo, hi) ON c.execution_id >= b.lo AND c.execution_id < b.hi
            WHERE c.parent_execution_id >= $1 AND c.parent_execution_id < $2 AND (c.execution_id >= $2 OR c.execution_id < $1)`,
    values: [r.lo, r.hi, among.map((x) => x.lo), among.map((x) => x.hi)],
  });
  const ranges: EventRange[] = [];
  for (const x of rows) {
    if (x.lo === null || x.hi === null) return null;
    ranges.push({ lo: Number(x.lo), hi: Number(x.hi) });
  }
  return ranges;
}

/** An execution's row as the archive keeps it (its projection; the log follows it). */
export type ArchivedExecution = Record<string, unknown> & { execution_id: number };
/** An event's row as the archive keeps it. */
export type ArchivedEvent = Record<string, unknown> & { execution_id: number; event_id: number };

/** Up to `limit` executions of range `r` after id `after`, by id. */
export async function rangeExecutions(q: Queryable, r: EventRange, after: number, limit: number): Promise<ArchivedExecution[]> {
  const { rows } = await q.query<{ row: ArchivedExecution }>({
    name: 'svc_range_executions',
    text: `SELECT to_jsonb(e) - 'snapshot' AS row FROM core.execution e
            WHERE e.execution_id >= $1 AND e.execution_id < $2 AND e.execution_id > $3 ORDER BY e.execution_id LIMIT $4`,
    values: [r.lo, r.hi, after, limit],
  });
  return rows.map((x) => x.row);
}

/** Up to `limit` events of range `r` after (`afterExecution`, `afterEvent`), in log order. */
export async function rangeEvents(q: Queryable, r: EventRange, after: { execution: number; event: number }, limit: number): Promise<ArchivedEvent[]> {
  const { rows } = await q.query<{ row: ArchivedEvent }>({
    name: 'svc_range_events',
    text: `SELECT to_jsonb(v) AS row FROM core.event v
            WHERE v.execution_id >= $1 AND v.execution_id < $2 AND (v.execution_id, v.event_id) > ($3, $4)
            ORDER BY v.execution_id, v.event_id LIMIT $5`,
    values: [r.lo, r.hi, after.execution, after.event, limit],
  });
  return rows.map((x) => x.row);
}

/** How long retention waits for a lock before it tries again at its next run (the hot path goes first). */
const DROP_LOCK_TIMEOUT_MS = 2_000;

/**
 * Deletes up to `limit` rows of range `r` of one table in one short transaction (retention's
 * drop, before the range's event partition goes): what points at an execution goes before it.
 * `resources`: the final status of the executions that are an MCP server's last lifecycle action,
 * kept on the resource row, whose status is read from it (one statement: resources are few);
 * `batches`: its batch requests (one statement, they are few: no index takes them by range);
 * `fires`: the trigger fires that started its executions; `commands`; `executions` that no
 * execution points at as its parent and no command as its own (a child goes before its parent,
 * whatever their ids; waits and admissions go with their execution). Returns how many rows went:
 * 0 when none is left.
 */
export function dropRangeRows(db: Db, r: EventRange, table: keyof typeof RANGE_ROWS_DROP, limit: number): Promise<number> {
  return shortTransaction(db, { name: `svc_range_${table}_drop`, text: RANGE_ROWS_DROP[table], values: table === 'batches' || table === 'resources' ? [r.lo, r.hi] : [r.lo, r.hi, limit] });
}

/**
 * Deletes up to `limit` trigger fires that started nothing (skipped, refused) and were fired more
 * than `days` ago, in one short transaction (retention; a fire that started an execution goes with
 * its range: dropRangeRows). Returns how many went: 0 when none is left.
 */
export function dropUnstartedFires(db: Db, days: number, limit: number): Promise<number> {
  return shortTransaction(db, {
    name: 'svc_unstarted_fires_drop',
    text: `DELETE FROM core.trigger_fire WHERE (path, name, fire_key) IN (
             SELECT path, name, fire_key FROM core.trigger_fire
              WHERE execution_id IS NULL AND fired_at < now() - make_interval(secs => $1::float8 * 86400) LIMIT $2)`,
    values: [days, limit],
  });
}

/** The transaction's lock waits end after DROP_LOCK_TIMEOUT_MS (an error: the work is tried again at its next run). */
function waitBrieflyForLocks(q: Queryable): Promise<unknown> {
  return q.query({ name: 'svc_brief_lock_timeout', text: `SELECT set_config('lock_timeout', $1, true)`, values: [String(DROP_LOCK_TIMEOUT_MS)] });
}

/** One statement of retention in its own transaction, waiting at most DROP_LOCK_TIMEOUT_MS for a lock; the rows it touched. */
async function shortTransaction(db: Db, statement: { name: string; text: string; values: unknown[] }): Promise<number> {
  return db.tx(async (q) => {
    await waitBrieflyForLocks(q);
    const { rowCount } = await q.query(statement);
    return rowCount ?? 0;
  });
}

const RANGE_ROWS_DROP = {
  resources: KEEP_RANGE_LAST_STATUSES,
  batches: `DELETE FROM core.batch_request WHERE execution_id >= $1 AND execution_id < $2`,
  fires: `DELETE FROM core.trigger_fire WHERE (path, name, fire_key) IN (
            SELECT path, name, fire_key FROM core.trigger_fire WHERE execution_id >= $1 AND execution_id < $2 LIMIT $3)`,
  // A start's idempotency key answers its execution's id: gone with it (retention shorter than a
  // key's day), a repeat of the start would name an execution that is not there.
  keys: `DELETE FROM core.idempotency_key WHERE (scope, key) IN (
           SELECT scope, key FROM core.idempotency_key WHERE execution_id >= $1 AND execution_id < $2 LIMIT $3)`,
  commands: `DELETE FROM core.command WHERE command_id IN (SELECT command_id FROM core.command WHERE execution_id >= $1 AND execution_id < $2 LIMIT $3)`,
  executions: `DELETE FROM core.execution WHERE execution_id IN (
                 SELECT e.execution_id FROM core.execution e
                  WHERE e.execution_id >= $1 AND e.execution_id < $2
                    AND NOT EXISTS (SELECT 1 FROM core.execution c WHERE c.parent_execution_id = e.execution_id)
                    AND NOT EXISTS (SELECT 1 FROM core.command c WHERE c.execution_id = e.execution_id)
                  LIMIT $3)`,
} as const;

/** Whether any execution of range `r` is left. */
export async function rangeHoldsExecutions(q: Queryable, r: EventRange): Promise<boolean> {
  const { rows } = await q.query<{ held: boolean }>({
    name: 'svc_range_holds_executions',
    text: `SELECT EXISTS (SELECT 1 FROM core.execution WHERE execution_id >= $1 AND execution_id < $2) AS held`,
    values: [r.lo, r.hi],
  });
  return rows[0].held;
}

const EVENT_RANGE_DROP = { name: 'svc_event_range_drop', text: `SELECT core.svc_event_partition_drop($1)` } as const;

/** Detaches and drops range `r`'s partition of the event log (its rows elsewhere gone first: dropRangeRows). */
export async function dropEventPartition(db: Db, r: EventRange): Promise<void> {
  await shortTransaction(db, { ...EVENT_RANGE_DROP, values: [r.lo] });
}

/**
 * Runs `work` in one transaction that holds the whole event log (ACCESS EXCLUSIVE: no event is
 * written or read meanwhile), waiting at most DROP_LOCK_TIMEOUT_MS for it: ranges dropped and made
 * again there leave no moment in which an event lands in the default partition.
 */
export function withEventLogHeld<T>(db: Db, work: (q: Queryable) => Promise<T>): Promise<T> {
  return db.tx(async (q) => {
    await waitBrieflyForLocks(q);
    await q.query(`LOCK TABLE core.event IN ACCESS EXCLUSIVE MODE`);
    return work(q);
  });
}

/** Whether range `r` holds no event. */
export async function eventRangeEmpty(q: Queryable, r: EventRange): Promise<boolean> {
  const { rows } = await q.query<{ empty: boolean }>({
    name: 'svc_event_range_empty',
    text: `SELECT NOT EXISTS (SELECT 1 FROM core.event WHERE execution_id >= $1 AND execution_id < $2) AS empty`,
    values: [r.lo, r.hi],
  });
  return rows[0].empty;
}

/** Detaches and drops range `r`'s partition inside withEventLogHeld (it was found empty there). */
export async function dropHeldEventRange(q: Queryable, r: EventRange): Promise<void> {
  await q.query({ ...EVENT_RANGE_DROP, values: [r.lo] });
}

/** The lowest execution id whose events the default partition holds (null: none; it is a safety net). */
export async function lowestDefaultExecutionId(q: Queryable): Promise<number | null> {
  const { rows } = await q.query<{ lowest: string | null }>({ name: 'svc_event_default_lowest', text: `SELECT min(execution_id) AS lowest FROM core.event_default`, values: [] });
  return rows[0].lowest === null ? null : Number(rows[0].lowest);
}
