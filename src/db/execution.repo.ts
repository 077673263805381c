import type { Queryable } from './queryable.ts';

export type ExecutionStatus = 'running' | 'completed' | 'failed' | 'cancelled';

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

const EXECUTION_COLUMNS = `execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status,
  progress, result, error, snapshot, machine_version, snapshot_event_id, last_event_id, started_at, updated_at, finished_at`;

/** Takes the per-execution advisory transaction locks in id order (so two routers never deadlock on them). */
export async function lockExecutions(q: Queryable, ids: number[]): Promise<void> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  if (sorted.length === 1) await q.query('SELECT pg_advisory_xact_lock($1::bigint)', [sorted[0]]);
  else if (sorted.length > 1) await q.query('SELECT pg_advisory_xact_lock(id) FROM unnest($1::bigint[]) AS id', [sorted]);
}

/** Loads executions with row locks (so inbox appends by other transactions wait for this one). */
export async function loadExecutionsForUpdate(q: Queryable, ids: number[]): Promise<ExecutionRow[]> {
  const { rows } = await q.query<ExecutionRow>(
    `SELECT ${EXECUTION_COLUMNS} FROM core.execution WHERE execution_id = ANY($1::bigint[]) ORDER BY execution_id FOR UPDATE`,
    [ids],
  );
  return rows;
}

export async function getExecution(q: Queryable, id: number): Promise<ExecutionRow | undefined> {
  const { rows } = await q.query<ExecutionRow>(`SELECT ${EXECUTION_COLUMNS} FROM core.execution WHERE execution_id = $1`, [id]);
  return rows[0];
}

/** Events of one execution with event_id > after, in order. */
export async function loadEventsAfter(q: Queryable, executionId: number, after: number, limit = 1_000_000): Promise<EventRow[]> {
  const { rows } = await q.query<EventRow>(
    `SELECT execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
       FROM core.event WHERE execution_id = $1 AND event_id > $2 ORDER BY event_id LIMIT $3`,
    [executionId, after, limit],
  );
  return rows;
}

export async function allocateExecutionId(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ id: number }>(`SELECT nextval('core.execution_id_seq') AS id`);
  return rows[0].id;
}

export type NewExecution = {
  execution_id: number;
  catalog_id: number;
  path: string;
  parent_execution_id: number | null;
  root_execution_id: number;
  parent_command_id: number | null;
};

export async function insertExecutions(q: Queryable, rows: NewExecution[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id)
     SELECT execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id
       FROM jsonb_to_recordset($1::jsonb) AS x(execution_id bigint, catalog_id bigint, path text, parent_execution_id bigint,
                                               root_execution_id bigint, parent_command_id bigint)
      ORDER BY execution_id`,
    [JSON.stringify(rows)],
  );
}

export async function insertEvents(q: Queryable, rows: EventRow[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error)
     SELECT execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error
       FROM jsonb_to_recordset($1::jsonb) AS x(execution_id bigint, event_id bigint, catalog_id bigint, event_type text, status text,
            step text, command_id bigint, worker_id text, context jsonb, result jsonb, error jsonb)`,
    [JSON.stringify(rows)],
  );
}

export type ExecutionUpdate = {
  execution_id: number;
  status: ExecutionStatus;
  progress: number;
  result: unknown;
  error: unknown;
  snapshot: unknown;
  machine_version: number;
  snapshot_event_id: number;
  last_event_id: number;
};

/** Writes every execution's projection and snapshot in one statement. */
export async function updateExecutions(q: Queryable, rows: ExecutionUpdate[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE core.execution e
        SET status = x.status, progress = x.progress, result = x.result, error = x.error, snapshot = x.snapshot,
            machine_version = x.machine_version, snapshot_event_id = x.snapshot_event_id, last_event_id = x.last_event_id,
            updated_at = now(),
            finished_at = CASE WHEN x.status <> 'running' AND e.finished_at IS NULL THEN now() ELSE e.finished_at END
       FROM jsonb_to_recordset($1::jsonb) AS x(execution_id bigint, status text, progress numeric, result jsonb, error jsonb,
            snapshot jsonb, machine_version int, snapshot_event_id bigint, last_event_id bigint)
      WHERE e.execution_id = x.execution_id`,
    [JSON.stringify(rows)],
  );
}

/** Terminal fast path: a late event only advances the ids; the state body is not rewritten. */
export async function advanceEventIds(q: Queryable, executionId: number, lastEventId: number): Promise<void> {
  await q.query(
    `UPDATE core.execution SET last_event_id = $2, snapshot_event_id = GREATEST(snapshot_event_id, $2) WHERE execution_id = $1`,
    [executionId, lastEventId],
  );
}

/**
 * Appends an event to another execution's log without its advisory lock (its row lock orders
 * us behind any transaction routing it); the event waits there until that execution is routed.
 */
export async function appendInboxEvent(
  q: Queryable,
  executionId: number,
  event: { event_type: string; context: unknown; result?: unknown; error?: unknown },
): Promise<{ event_id: number; status: ExecutionStatus } | undefined> {
  const { rows } = await q.query<{ event_id: number; status: ExecutionStatus }>(
    `WITH bump AS (
       UPDATE core.execution SET last_event_id = last_event_id + 1 WHERE execution_id = $1
       RETURNING execution_id, catalog_id, status, last_event_id)
     INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, context, result, error)
     SELECT execution_id, last_event_id, catalog_id, $2, status, $3, $4, $5 FROM bump
     RETURNING event_id, status`,
    [executionId, event.event_type, JSON.stringify(event.context), JSON.stringify(event.result ?? null), JSON.stringify(event.error ?? null)],
  );
  return rows[0];
}

/** Running children of an execution (for cancellation cascades). */
export async function runningChildren(q: Queryable, parentId: number): Promise<number[]> {
  const { rows } = await q.query<{ execution_id: number }>(
    `SELECT execution_id FROM core.execution WHERE parent_execution_id = $1 AND status = 'running'`,
    [parentId],
  );
  return rows.map((r) => r.execution_id);
}

/** Executions with appended events not yet folded (after a crash between append and routing). */
export async function executionsWithInbox(q: Queryable, limit: number): Promise<number[]> {
  const { rows } = await q.query<{ execution_id: number }>(
    `SELECT execution_id FROM core.execution WHERE status = 'running' AND last_event_id > snapshot_event_id ORDER BY execution_id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.execution_id);
}

export type ExecutionListFilter = { status?: string; path?: string; limit: number; before?: number };

/** Executions newest first, keyset-paginated by execution_id. */
export async function listExecutions(q: Queryable, f: ExecutionListFilter): Promise<ExecutionRow[]> {
  const { rows } = await q.query<ExecutionRow>(
    `SELECT ${EXECUTION_COLUMNS.replace('snapshot,', '')} , NULL AS snapshot FROM core.execution
      WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR path = $2) AND ($3::bigint IS NULL OR execution_id < $3)
      ORDER BY execution_id DESC LIMIT $4`,
    [f.status ?? null, f.path ?? null, f.before ?? null, f.limit],
  );
  return rows;
}

/** Deletes keychain entries that die with an execution: its `local` ones, and `shared` ones when it is a root. */
export async function deleteExecutionKeychain(q: Queryable, executionId: number, isRoot: boolean): Promise<void> {
  await q.query(
    `DELETE FROM core.keychain WHERE (scope_type = 'local' AND execution_id = $1) OR ($2 AND scope_type = 'shared' AND execution_id = $1)`,
    [executionId, isRoot],
  );
}
