import { EVENT } from '../../machines/event-types.ts';
import type { ExecutionStatus } from '../../machines/statuses.ts';
import { claimableSql, claimTakeableSql, heldSql } from './command-plans.ts';
import type { CatalogRow } from './catalog.repo.ts';
import type { Queryable } from './queryable.ts';
import { BATCH_PENDING_SQL } from './batch-pending-sql.ts';
import { LIVE_EXECUTION_SQL, sqlList } from './sql-list.ts';
import { opaque } from './opaque-param.ts';

const MAX_BIGINT = '9223372036854775807';

// The execution id ($1) of the statements that reach core.event by it, hidden (opaque): a plan
// for one id would prune the ranges while planning and be made again on every call.
export const HIDDEN_ID = opaque('$1', 'bigint');

export type { ExecutionStatus } from '../../machines/statuses.ts';

export type ExecutionRow = {
  execution_id: number;
  catalog_id: number;
  path: string;
  parent_execution_id: number | null;
  root_execution_id: number;
  parent_command_id: number | null;
  status: ExecutionStatus;
  progress: number;
  result: unknown;
  error: unknown;
  snapshot: unknown;
  machine_version: number;
  snapshot_event_id: number;
  /** The last event folded into the machine; later ones are inbox events still to apply. */
  applied_event_id: number;
  last_event_id: number;
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
};

export type EventRow = {
  execution_id: number;
  event_id: number;
  catalog_id: number;
  event_type: string;
  status: ExecutionStatus;
  step: string | null;
  command_id: number | null;
  worker_id: string | null;
  context: unknown;
  result: unknown;
  error: unknown;
  created_at?: string;
};

/** The columns of an ExecutionRow, for SELECT lists (src/db/wait.repo.ts reads a row with its waits). */
export const EXECUTION_COLUMNS = `execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status,
  progress, result, error, snapshot, machine_version, snapshot_event_id, applied_event_id, last_event_id, started_at, updated_at, finished_at`;
// The same, the stored snapshot (a whole context, kept once finished) as null: reads that never fold.
export const EXECUTION_COLUMNS_NO_SNAPSHOT = `${EXECUTION_COLUMNS.replace('snapshot,', '')}, NULL AS snapshot`;

/**
 * When the execution of id `idSql` was admitted (its first `execution.admitted`, as ISO text),
 * when flow control queued it: null when it never waited (its start was its admission) or waits
 * still. Only one that queued, its event after the start, is searched (an index probe otherwise).
 */
export function admittedAtSql(idSql: string): string {
  return `CASE WHEN (SELECT q.event_type FROM core.event q WHERE q.execution_id = ${idSql} AND q.event_id > 1 ORDER BY q.event_id LIMIT 1) = '${EVENT.executionQueued}'
            THEN (SELECT to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM core.event a
                   WHERE a.execution_id = ${idSql} AND a.event_type = '${EVENT.executionAdmitted}' ORDER BY a.event_id LIMIT 1) END`;
}

/** One execution's projection row; `progress` as stored (done steps over known steps). */
export async function getExecution(q: Queryable, id: number): Promise<ExecutionRow | undefined> {
  const { rows } = await q.query<ExecutionRow>(`SELECT ${EXECUTION_COLUMNS} FROM core.execution WHERE execution_id = $1`, [id]);
  return rows[0];
}

/**
 * Events of one execution with event_id > after, in order, up to the first id not written yet: a
 * batch's items take ids reserved when it was accepted, written when it is routed, and a reader
 * that follows the log (since_event_id) must not pass them by.
 */
export async function loadEventsAfter(q: Queryable, executionId: number, after: number, limit = 1_000_000): Promise<EventRow[]> {
  const { rows } = await q.query<EventRow>({
    // Prepared, its parameters hidden (HIDDEN_ID): the events API, /state and the inspection
    // stream's polls read through it.
    name: 'svc_events_after',
    text: `SELECT execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
       FROM core.event WHERE execution_id = ${HIDDEN_ID} AND event_id > ${opaque('$2', 'bigint')}
        AND event_id < COALESCE((SELECT min(b.event_ids[1]) FROM core.batch_request b
                                  WHERE b.execution_id = ${HIDDEN_ID} AND b.state IN (${BATCH_PENDING_SQL})
                                    AND NOT EXISTS (SELECT 1 FROM core.event v WHERE v.execution_id = ${HIDDEN_ID} AND v.event_id = b.event_ids[1])), ${MAX_BIGINT})
      ORDER BY event_id LIMIT ${opaque('$3', 'bigint')}`,
    values: [executionId, after, limit],
  });
  return rows;
}

/** The events of one step of an execution, in order (by the log's key: the execution's events, filtered). */
export async function loadStepEvents(q: Queryable, executionId: number, step: string, limit: number): Promise<EventRow[]> {
  const { rows } = await q.query<EventRow>(
    `SELECT execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
       FROM core.event
      WHERE execution_id = $1
        AND (step = $2
             -- A child's end is sent by the child, which knows its parent's seq, not its step:
             -- stored without one, it belongs to the step whose child.started has that seq.
             OR (step IS NULL AND event_type = $4 AND context -> 'seq' IN (
                   SELECT context -> 'seq' FROM core.event WHERE execution_id = $1 AND step = $2 AND event_type = $5)))
      ORDER BY event_id LIMIT $3`,
    [executionId, step, limit, EVENT.childFinished, EVENT.childStarted],
  );
  return rows;
}

/** n new execution ids in one round trip. */
export async function allocateExecutionIds(q: Queryable, n: number): Promise<number[]> {
  const { rows } = await q.query<{ id: number }>(`SELECT nextval('core.execution_id_seq') AS id FROM generate_series(1, $1)`, [n]);
  return rows.map((r) => r.id);
}

/** A catalog entry as a child start compiles it. */
export type ChildPlaybook = Pick<CatalogRow, 'catalog_id' | 'path' | 'kind' | 'payload'>;

/**
 * What a fold over playbooks with `playbook` tasks may need, in ONE statement: the newest catalog
 * entry of each of `paths`, and the running children of each of `parents`.
 */
export async function childReads(q: Queryable, paths: readonly string[], parents: readonly number[]): Promise<{ heads: ChildPlaybook[]; children: { parent: number; child: number }[] }> {
  const { rows } = await q.query<{ head: ChildPlaybook | null; parent: number | null; child: number | null }>({
    name: 'svc_child_reads',
    text: `SELECT to_json(h) AS head, NULL::bigint AS parent, NULL::bigint AS child
             FROM (SELECT DISTINCT ON (path) catalog_id, path, kind, payload FROM core.catalog
                    WHERE path = ANY($1::text[]) ORDER BY path, version DESC) h
           UNION ALL
           SELECT NULL, e.parent_execution_id, e.execution_id FROM core.execution e
            WHERE e.parent_execution_id = ANY($2::bigint[]) AND e.status IN ${LIVE_EXECUTION_SQL}`,
    values: [paths, parents],
  });
  return {
    heads: rows.flatMap((r) => (r.head ? [r.head] : [])),
    children: rows.flatMap((r) => (r.parent !== null && r.child !== null ? [{ parent: Number(r.parent), child: Number(r.child) }] : [])),
  };
}

/**
 * The live child started under each (parent, seq) pair, as the parent's `child.started` event names
 * it (a `playbook` task's timeout cancels that one child); a pair with none is left out. Two
 * statements, each on one distribution key (the parents' logs, then the children's rows): a
 * rare read, never on a step's path.
 */
export async function childrenStartedAt(q: Queryable, pairs: readonly { parent: number; seq: number }[]): Promise<{ parent: number; seq: number; child: number }[]> {
  const { rows } = await q.query<{ parent: string; seq: number; child: string }>({
    name: 'svc_children_started_at',
    text: `SELECT w.parent, w.seq, (v.context ->> 'child_execution_id')::bigint AS child
             FROM unnest($1::bigint[], $2::int[]) AS w(parent, seq)
             JOIN core.event v ON v.execution_id = w.parent AND v.event_type = $3 AND v.context -> 'seq' = to_jsonb(w.seq)`,
    values: [pairs.map((p) => p.parent), pairs.map((p) => p.seq), EVENT.childStarted],
  });
  const started = rows.flatMap((r) => (r.child === null ? [] : [{ parent: Number(r.parent), seq: r.seq, child: Number(r.child) }]));
  if (!started.length) return [];
  const live = await q.query<{ execution_id: string }>({
    name: 'svc_live_of',
    text: `SELECT execution_id FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status IN ${LIVE_EXECUTION_SQL}`,
    values: [started.map((r) => r.child)],
  });
  const alive = new Set(live.rows.map((r) => Number(r.execution_id)));
  return started.filter((r) => alive.has(r.child));
}

/** Executions with appended events not yet folded (after a crash between append and routing). */
export async function executionsWithInbox(q: Queryable, limit: number): Promise<number[]> {
  const { rows } = await q.query<{ execution_id: number }>(
    `SELECT execution_id FROM core.execution WHERE status IN ${LIVE_EXECUTION_SQL} AND last_event_id > applied_event_id ORDER BY execution_id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.execution_id);
}

/** Filters of the execution list; every one optional. `q`: an execution id exactly, or text in the path. */
export type ExecutionListFilter = {
  path?: string;
  pathPrefix?: string;
  startedAfter?: Date;
  startedBefore?: Date;
  parent?: number;
  trigger?: string;
  requestedBy?: string;
  q?: string;
  /** Labels the execution was started with, each of these key-value pairs. */
  labels?: Record<string, string>;
};

/** Where the previous page ended: its last row's start time (microseconds, as text) and id, or a bare id. */
export type ExecutionListCursor = { startedAt: string; id: number } | { afterId: number };

/** Most rows counted per status for `counts`: a count equal to it means "at least". */
export const EXECUTION_COUNT_CAP = 10_000;

// The filters both list statements share, with fixed parameter numbers $1..$10. A filter's
// parameter is null when absent; the page is planned with its values, so an absent filter folds
// away and a present one reaches its index (migrations/0017_execution_listing.sql).
const LIST_FILTERS = `($1::text IS NULL OR e.path = $1)
        AND ($2::text IS NULL OR e.path LIKE $2)
        AND ($3::timestamptz IS NULL OR e.started_at >= $3)
        AND ($4::timestamptz IS NULL OR e.started_at < $4)
        AND ($5::bigint IS NULL OR e.parent_execution_id = $5)
        AND ($6::text IS NULL OR e.execution_id = ANY (ARRAY(
              SELECT ev.execution_id FROM core.event ev
               WHERE ev.event_type = '${EVENT.executionStarted}' AND ev.context ? 'trigger' AND ((ev.context -> 'trigger') ->> 'name') = $6)))
        AND ($7::text IS NULL OR e.execution_id = ANY (ARRAY(
              SELECT ev.execution_id FROM core.event ev
               WHERE ev.event_type = '${EVENT.executionStarted}' AND ev.context ? 'requested_by' AND ((ev.context -> 'requested_by') ->> 'sub') = $7)))
        AND ($8::text IS NULL OR e.execution_id = $9 OR strpos(lower(e.path), lower($8)) > 0)
        AND ($10::jsonb IS NULL OR e.execution_id = ANY (ARRAY(
              SELECT ev.execution_id FROM core.event ev
               WHERE ev.event_type = '${EVENT.executionStarted}' AND ev.context ? 'labels' AND (ev.context -> 'labels') @> $10)))`;

const LIST_PAGE = `SELECT ${EXECUTION_COLUMNS_NO_SNAPSHOT},
       to_char(e.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS started_key,
       ${admittedAtSql('e.execution_id')} AS admitted_at
  FROM core.execution e
 WHERE ${LIST_FILTERS}
   AND ($11::text IS NULL OR e.status = $11)
   AND ($12::timestamptz IS NULL OR (e.started_at, e.execution_id) < ($12::timestamptz, $13::bigint))
   AND ($14::bigint IS NULL OR (e.started_at, e.execution_id) < (SELECT c.started_at, c.execution_id FROM core.execution c WHERE c.execution_id = $14))
 ORDER BY e.started_at DESC, e.execution_id DESC
 LIMIT $15`;

const LIST_COUNTS = `SELECT s.status,
       (SELECT count(*) FROM (SELECT 1 FROM core.execution e WHERE e.status = s.status AND ${LIST_FILTERS} LIMIT $12) x)::int AS n
  FROM unnest($11::text[]) AS s(status)`;

/** A LIKE pattern for text starting with `prefix` (its %, _ and \\ taken literally). */
function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filterValues(f: ExecutionListFilter): unknown[] {
  const qId = f.q !== undefined && /^\d{1,15}$/.test(f.q) ? Number(f.q) : null;
  return [
    f.path ?? null,
    f.pathPrefix === undefined ? null : prefixPattern(f.pathPrefix),
    f.startedAfter ?? null,
    f.startedBefore ?? null,
    f.parent ?? null,
    f.trigger ?? null,
    f.requestedBy ?? null,
    f.q ?? null,
    qId,
    f.labels === undefined ? null : JSON.stringify(f.labels),
  ];
}

export type ListedExecution = ExecutionRow & { started_key: string; admitted_at: string | null };

/**
 * One page of executions, newest first by start time then id, after `cursor`, matching `f` and
 * `status`. `more`: rows remain after this page (one row beyond `limit` is read to know).
 */
export async function listExecutions(
  q: Queryable,
  f: ExecutionListFilter & { status?: ExecutionStatus; limit: number; cursor?: ExecutionListCursor },
): Promise<{ rows: ListedExecution[]; more: boolean }> {
  const c = f.cursor;
  const keyset = c && 'startedAt' in c ? c : null;
  const afterId = c && 'afterId' in c ? c.afterId : null;
  const { rows } = await q.query<ListedExecution>(LIST_PAGE, [
    ...filterValues(f),
    f.status ?? null,
    keyset?.startedAt ?? null,
    keyset?.id ?? null,
    afterId,
    f.limit + 1,
  ]);
  return { rows: rows.slice(0, f.limit), more: rows.length > f.limit };
}

/**
 * How many executions of each of `statuses` match `f` (the status filter aside, so that each
 * status shows what choosing it would list), each counted up to EXECUTION_COUNT_CAP.
 */
export async function countExecutionsByStatus(q: Queryable, f: ExecutionListFilter, statuses: readonly ExecutionStatus[]): Promise<Record<string, number>> {
  const { rows } = await q.query<{ status: string; n: number }>(LIST_COUNTS, [...filterValues(f), statuses, EXECUTION_COUNT_CAP]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export type StaleExecution = { execution_id: number; path: string; parent_execution_id: number | null; started_at: Date };

/** Its root, and how many ancestors it has (`depth`, 0: a root). */
export type StaleRunning = StaleExecution & { root_execution_id: number; depth: number };

/**
 * Executions without a terminal event (status running) started over `olderThanMinutes` ago, by id
 * after `afterId` (keyset paging), at most `limit`. An id is no order of parent and child (ids come
 * in blocks per server, per node under Citus): `depth`, along parent_execution_id, is. The start is
 * the projection's `started_at` or, when older, the `execution.started` event's time (the log's).
 * Not one of a tree that holds a paused or queued execution, which waits on purpose (as
 * auto-resume's interruptedRoots reads a tree): a cancel of its parent would cancel it too.
 */
export async function runningStartedBefore(q: Queryable, p: { olderThanMinutes: number; afterId: number; limit: number }): Promise<StaleRunning[]> {
  const { rows } = await q.query<StaleRunning>(
    // A parent link is written once, with the child, to a row that exists: the walk up ends.
    `WITH held AS (SELECT DISTINCT root_execution_id FROM core.execution WHERE status IN ('paused', 'queued'))
     SELECT e.execution_id, e.path, e.parent_execution_id, e.root_execution_id, e.started_at, d.depth FROM core.execution e
      CROSS JOIN LATERAL (WITH RECURSIVE up(id) AS (SELECT e.parent_execution_id UNION ALL
                            SELECT a.parent_execution_id FROM up JOIN core.execution a ON a.execution_id = up.id)
                          SELECT count(id)::int AS depth FROM up) d
      WHERE e.status = 'running' AND e.execution_id > $2
        AND e.root_execution_id NOT IN (SELECT root_execution_id FROM held)
        AND (e.started_at < now() - make_interval(mins => $1)
             OR EXISTS (SELECT 1 FROM core.event ev WHERE ev.execution_id = e.execution_id AND ev.event_type = $4
                           AND ev.created_at < now() - make_interval(mins => $1)))
      ORDER BY e.execution_id LIMIT $3`,
    [p.olderThanMinutes, p.afterId, p.limit, EVENT.executionStarted],
  );
  return rows;
}

// What the claims of a tree (the root `root` and its running descendants) add up to: how many
// commands they have and the sum of their attempts, as text. A claim (a live worker's, of a
// stranded command too) bumps `attempt`, and a step that moves on issues commands or ends a child,
// so the text changes with either; the root's cancel changes neither (its commands are counted
// whatever its status).
const TREE_CLAIMS = (root: string) => `(SELECT count(*) || ':' || coalesce(sum(c.attempt), 0)
          FROM core.execution x JOIN core.command c ON c.execution_id = x.execution_id
         WHERE x.execution_id = ${root} OR (x.status IN ${LIVE_EXECUTION_SQL} AND x.root_execution_id = ${root}))`;

// A tree that waits (a timer, a signal, its admission, a worker with room) or that an operator
// paused is not interrupted: nothing has to run in it until its wait ends, it is admitted, its
// PENDING command (never claimed yet, kept in the table: a stop does not lose it) is claimed by a
// worker with room (and room on its key, for a task's limit) or it is resumed. Cancelled, it lost
// its place, and a restart ran again the steps it had done. A stop loses a claim whose holder died.
const INTERRUPTED_ROOTS = `WITH running AS (
       SELECT e.execution_id, e.root_execution_id, e.status,
              (SELECT ev.created_at FROM core.event ev WHERE ev.execution_id = e.execution_id AND ev.event_id = e.last_event_id) AS last_event_at
         FROM core.execution e WHERE e.status IN ${LIVE_EXECUTION_SQL}),
     trees AS (SELECT root_execution_id, max(last_event_at) AS last_event_at FROM running GROUP BY root_execution_id)
     SELECT r.execution_id, r.catalog_id, t.last_event_at, ${TREE_CLAIMS('r.execution_id')} AS claims
       FROM trees t JOIN core.execution r ON r.execution_id = t.root_execution_id
      WHERE r.status = 'running' AND r.parent_execution_id IS NULL AND r.execution_id > $4
        AND t.last_event_at < now() - make_interval(secs => $1)
        AND t.last_event_at >= now() - make_interval(mins => $2)
        AND NOT EXISTS (SELECT 1 FROM running x WHERE x.root_execution_id = t.root_execution_id AND x.status IN ('paused', 'queued'))
        AND NOT EXISTS (SELECT 1 FROM running x JOIN core.wait w ON w.execution_id = x.execution_id WHERE x.root_execution_id = t.root_execution_id)
        AND NOT EXISTS (SELECT 1 FROM running x JOIN core.command c ON c.execution_id = x.execution_id
                         WHERE x.root_execution_id = t.root_execution_id AND ${claimableSql('c')})
        AND NOT EXISTS (
          SELECT 1 FROM running x JOIN core.command c ON c.execution_id = x.execution_id
           WHERE x.root_execution_id = t.root_execution_id AND ${heldSql('c')}
             AND NOT ${claimTakeableSql('c', { stale: '$3::float8', hard: 'NULL::float8' })})
      ORDER BY r.execution_id LIMIT $5`;

/**
 * Running root executions that look interrupted: the newest event of their whole tree (root and
 * running descendants) is older than `minStaleSeconds` and within `windowMinutes`, nothing of the
 * tree waits on purpose (a timer, a signal, admission, a pause, or a PENDING command: a backlog
 * workers will claim), and no command of the tree is held by a live claimer (one the claim policy
 * would not let go, hard timeout aside: see claimTakeableSql). After `afterId`, in id order, at
 * most `limit`. `claims`: the tree's claims as read (treeClaims), to act only while they stand.
 */
export async function interruptedRoots(q: Queryable, p: { minStaleSeconds: number; windowMinutes: number; workerStaleSeconds: number; afterId: number; limit: number }): Promise<InterruptedRoot[]> {
  const { rows } = await q.query<InterruptedRoot>(INTERRUPTED_ROOTS, [p.minStaleSeconds, p.windowMinutes, p.workerStaleSeconds, p.afterId, p.limit]);
  return rows;
}

export type InterruptedRoot = { execution_id: number; catalog_id: number; last_event_at: Date; claims: string };

/**
 * Executions auto-resume cancelled to restart (`execution.cancelled` with reason `auto_resume` and
 * `successor: true`) within `windowMinutes`, and whose successor never started (no
 * `execution.started` names it `resumed_from`): a server died between the two writes. Both
 * looked up by their partial indexes (migrations/0052); in id order.
 */
export async function successorlessResumes(q: Queryable, windowMinutes: number): Promise<Pick<InterruptedRoot, 'execution_id' | 'catalog_id'>[]> {
  const { rows } = await q.query<Pick<InterruptedRoot, 'execution_id' | 'catalog_id'>>(
    // The types as literals, so that the partial indexes' predicates match the text.
    `SELECT v.execution_id, v.catalog_id FROM core.event v
      WHERE v.event_type = '${EVENT.executionCancelled}' AND v.context->>'reason' = 'auto_resume' AND v.created_at >= now() - make_interval(mins => $1)
        AND v.context->>'successor' = 'true'
        AND NOT EXISTS (SELECT 1 FROM core.event s WHERE s.event_type = '${EVENT.executionStarted}' AND s.context ? 'resumed_from'
                           AND s.context->>'resumed_from' = v.execution_id::text)
      ORDER BY v.execution_id`,
    [windowMinutes],
  );
  return rows;
}

/**
 * The claims of the tree rooted at `rootId` (its running executions' commands: how many, and
 * their attempts summed), as interruptedRoots gives them: equal to what it gave while no command
 * of the tree was claimed again and no step moved on.
 */
export async function treeClaims(q: Queryable, rootId: number): Promise<string> {
  const { rows } = await q.query<{ claims: string }>(`SELECT ${TREE_CLAIMS('$1::bigint')} AS claims`, [rootId]);
  return rows[0].claims;
}

/** The `execution.started` event of an execution (its input: workload and args). */
export async function startEvent(q: Queryable, executionId: number): Promise<EventRow | undefined> {
  return (await loadEventsAfter(q, executionId, 0, 1))[0];
}

/**
 * An execution's first `execution.admitted` (undefined: none; an execution admitted at its start
 * has none): a debounced one's holds the payload it ran with (`result`) and the priority
 * (`context.priority`), its burst's last start's. By the log's key: that execution's events.
 */
export async function admittedEvent(q: Queryable, executionId: number): Promise<EventRow | undefined> {
  const { rows } = await q.query<EventRow>(
    `SELECT execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error
       FROM core.event WHERE execution_id = $1 AND event_type = $2 ORDER BY event_id LIMIT 1`,
    [executionId, EVENT.executionAdmitted],
  );
  return rows[0];
}

/** What a `playbook` task's timer is for (timer.set's context): its child's timeout, or the delay before `attempt`. */
export type TaskTimer = { for: 'timeout' | 'retry'; task: string; attempt: number };
