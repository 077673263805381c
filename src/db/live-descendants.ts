import type { ExecutionStatus } from '../../machines/statuses.ts';
import type { StaleExecution } from './execution.repo.ts';
import type { Queryable } from './queryable.ts';
import { LIVE_EXECUTION_SQL } from './sql-list.ts';

// Children reached through parent_execution_id (execution_parent_idx), live ones only: a finished
// child's own children were cancelled or finished with it.
const LIVE_DESCENDANTS = `WITH RECURSIVE tree AS (
       SELECT e.execution_id, e.path, e.parent_execution_id, e.started_at FROM core.execution e
        WHERE e.parent_execution_id = ANY($1::bigint[]) AND e.status IN ${LIVE_EXECUTION_SQL}
       UNION
       SELECT e.execution_id, e.path, e.parent_execution_id, e.started_at FROM core.execution e JOIN tree t ON e.parent_execution_id = t.execution_id
        WHERE e.status IN ${LIVE_EXECUTION_SQL})
     SELECT * FROM tree WHERE NOT execution_id = ANY($1::bigint[]) ORDER BY execution_id`;

/**
 * The live (queued, running, paused) descendants of `ids`, those themselves left out, by id: what
 * cancelling `ids` cancels with them (a cancel cascades to children, and theirs).
 */
export async function liveDescendants(q: Queryable, ids: number[]): Promise<StaleExecution[]> {
  if (!ids.length) return [];
  const { rows } = await q.query<StaleExecution>(LIVE_DESCENDANTS, [ids]);
  return rows;
}

/** The status of each of `ids` that exists. */
export async function executionStatuses(q: Queryable, ids: number[]): Promise<Map<number, ExecutionStatus>> {
  if (!ids.length) return new Map();
  const { rows } = await q.query<{ execution_id: number; status: ExecutionStatus }>(`SELECT execution_id, status FROM core.execution WHERE execution_id = ANY($1::bigint[])`, [ids]);
  return new Map(rows.map((r) => [r.execution_id, r.status]));
}
