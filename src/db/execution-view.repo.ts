import { EVENT } from '../../machines/event-types.ts';
import { claimableSql, limitDefinedSql } from './command-plans.ts';
import { admittedAtSql, EXECUTION_COLUMNS_NO_SNAPSHOT, HIDDEN_ID, type ExecutionRow, type TaskTimer } from './execution.repo.ts';
import type { Queryable } from './queryable.ts';

// GET /api/executions/{id}: an execution's row with what it waits for, its retry links and who
// started it, in one prepared statement.

/**
 * A wait of an execution as GET /api/executions/{id} shows it (core.wait). A `playbook` task's own
 * timer (its timeout, its retry's delay) says so: `for`, `task` and `attempt`, as its timer.set does.
 */
export type ExecutionWait = { step: string; seq: number; kind: 'timer' | 'signal'; signal: string | null; wake_at: string | null; approval_roles: string[] | null; since: string } & Partial<TaskTimer>;

type StoredWait = Omit<ExecutionWait, keyof TaskTimer> & { purpose: TaskTimer | null };

/**
 * What a queued execution waits for (core.admission): a limit's key (`limit` null for a debounce
 * alone), the close of its debounce window (`not_before`, null when it is not debounced), and
 * since when.
 */
export type ExecutionFlow = { limit: string | null; key: string | null; priority: number; defined: boolean; not_before: string | null; queued_at: string; admitted_at: string | null };

/**
 * How many of an execution's waits, and of its commands waiting for room on a limit, its view
 * lists: a parallel loop on a limit may queue thousands, and clients poll the view each second.
 */
export const EXECUTION_VIEW_WAITS_MAX = 100;

/** A command of the execution that waits for room on its task's limit (PENDING, limited). */
export type ExecutionLimitWait = { step: string; seq: number; limit: string; key: string; defined: boolean; since: string };

/** Who started an execution (its caller's `sub`) and the trigger that did, as its execution.started says (the list filters requested_by and trigger). */
export type StartedBy = { requested_by: string | null; trigger: string | null };

/**
 * An execution's row with its retry links (the execution it retries, `retry_of`, null when none;
 * those that retry it, `retried_as`, oldest first; the one auto-resume restarted as it, `resumed_from`, and the one it was restarted as, `resumed_as`), what it waits for (`waits`, by seq; `flow`, its
 * admission while it has one; `limit_waits`, its commands waiting for room on a limit; each list the
 * first EXECUTION_VIEW_WAITS_MAX, with its `_count` in all), the labels it was started with, who
 * or what started it and when it was admitted (`admitted_at`, admittedAtSql); one statement.
 */
export async function getExecutionWithRetryLinks(
  q: Queryable,
  id: number,
): Promise<(ExecutionRow & StartedBy & { admitted_at: string | null; retry_of: number | null; resumed_from: number | null; resumed_as: number | null; retried_as: number[]; waits: ExecutionWait[]; waits_count: number; labels: Record<string, string>; flow: ExecutionFlow | null; limit_waits: ExecutionLimitWait[]; limit_waits_count: number }) | undefined> {
  const { rows } = await q.query<ExecutionRow & StartedBy & { admitted_at: string | null; retry_of: string | null; resumed_from: string | null; resumed_as: string | null; retried_as: string[]; waits: StoredWait[]; waits_count: number; labels: Record<string, string> | null; flow: ExecutionFlow | null; limit_waits: ExecutionLimitWait[]; limit_waits_count: number }>({
    // Prepared (named): planning this statement costs more than running it, and clients poll it
    // (the id hidden: HIDDEN_ID; 0.9 ms against 0.23 ms a call).
    name: 'svc_execution_view',
    text: `SELECT ${EXECUTION_COLUMNS_NO_SNAPSHOT},
            started.context->>'retry_of' AS retry_of, started.context->>'resumed_from' AS resumed_from, started.context->'labels' AS labels,
            started.context->'requested_by'->>'sub' AS requested_by, started.context->'trigger'->>'name' AS trigger,
            ${admittedAtSql(HIDDEN_ID)} AS admitted_at,
            ARRAY(SELECT execution_id FROM core.event
                   WHERE event_type = '${EVENT.executionStarted}' AND context ? 'retry_of' AND context->>'retry_of' = ${HIDDEN_ID}::text
                   ORDER BY execution_id) AS retried_as,
            -- Its successor's start names it (event_resumed_from_idx): auto-resume starts one at most.
            (SELECT min(execution_id) FROM core.event
              WHERE event_type = '${EVENT.executionStarted}' AND context ? 'resumed_from' AND context->>'resumed_from' = ${HIDDEN_ID}::text) AS resumed_as,
            -- A playbook task's timer says what it is for in its row (\`purpose\`, migrations/0043): no read of the log.
            (SELECT coalesce(json_agg(json_build_object('step', w.step, 'seq', w.seq, 'kind', w.kind, 'signal', w.signal,
                                                        'wake_at', to_char(w.wake_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                                        'approval_roles', w.approval_roles, 'purpose', w.purpose,
                                                        'since', to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY w.seq), '[]')
               FROM (SELECT * FROM core.wait WHERE execution_id = ${HIDDEN_ID} ORDER BY seq LIMIT ${EXECUTION_VIEW_WAITS_MAX}) w) AS waits,
            (SELECT count(*)::int FROM core.wait WHERE execution_id = ${HIDDEN_ID}) AS waits_count,
            (SELECT json_build_object('limit', a.limit_name, 'key', a.limit_key, 'priority', a.priority, 'defined', ${limitDefinedSql('a.limit_name')},
                                      -- A start that is not debounced is written with not_before at its start: no window to show.
                                      'not_before', CASE WHEN a.debounce_path IS NOT NULL THEN to_char(a.not_before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END,
                                      'queued_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                      'admitted_at', to_char(a.admitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
               FROM core.admission a WHERE a.execution_id = ${HIDDEN_ID}) AS flow,
            (SELECT coalesce(json_agg(json_build_object('step', c.step, 'seq', c.seq, 'limit', c.limit_name, 'key', c.limit_key, 'defined', ${limitDefinedSql('c.limit_name')},
                                                        'since', to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY c.seq), '[]')
               FROM (SELECT * FROM core.command c WHERE c.execution_id = ${HIDDEN_ID} AND ${claimableSql('c')} AND c.limit_name IS NOT NULL
                      ORDER BY c.seq LIMIT ${EXECUTION_VIEW_WAITS_MAX}) c) AS limit_waits,
            (SELECT count(*)::int FROM core.command c WHERE c.execution_id = ${HIDDEN_ID} AND ${claimableSql('c')} AND c.limit_name IS NOT NULL) AS limit_waits_count
       FROM core.execution
       -- Its execution.started, read once for what it says of the start.
       LEFT JOIN LATERAL (SELECT context FROM core.event WHERE execution_id = ${HIDDEN_ID} AND event_id = 1 AND event_type = '${EVENT.executionStarted}') started ON true
      WHERE execution_id = ${HIDDEN_ID}`,
    values: [id],
  });
  const row = rows[0];
  return row && { ...row, retry_of: row.retry_of === null ? null : Number(row.retry_of), resumed_from: row.resumed_from === null ? null : Number(row.resumed_from), resumed_as: row.resumed_as === null ? null : Number(row.resumed_as), retried_as: row.retried_as.map(Number), labels: row.labels ?? {}, waits: row.waits.map(({ purpose, ...w }) => (purpose ? { ...w, ...purpose } : w)) };
}

/** What a parent's step view reads of a child: whether it is queued or paused now, and when it was admitted. */
export type ChildAdmission = { queued: boolean; paused: boolean; admitted_at: string | null };

/**
 * Of the children `ids` (a step's `playbook` task runs), whether each is queued or paused now and
 * when it was admitted (its first `execution.admitted`, null when it never waited or is still
 * queued): a child waiting on its playbook's `concurrency`, or paused by hand, read as running in
 * its parent's step view.
 */
export async function childAdmissions(q: Queryable, ids: readonly number[]): Promise<Map<number, ChildAdmission>> {
  if (!ids.length) return new Map();
  const { rows } = await q.query<{ execution_id: number } & ChildAdmission>(
    `SELECT x.execution_id::float8 AS execution_id, x.status = 'queued' AS queued, x.status = 'paused' AS paused,
            (SELECT to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM core.event e
              WHERE e.execution_id = x.execution_id AND e.event_type = '${EVENT.executionAdmitted}' ORDER BY e.event_id LIMIT 1) AS admitted_at
       FROM core.execution x WHERE x.execution_id = ANY($1::bigint[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.execution_id, { queued: r.queued, paused: r.paused, admitted_at: r.admitted_at }]));
}
