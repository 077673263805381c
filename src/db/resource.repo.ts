import type { Queryable } from './queryable.ts';

export type ResourceRow = {
  kind: string;
  name: string;
  catalog_id: number | null;
  path: string | null;
  version: number | null;
  config: unknown;
  last_action: string | null;
  last_execution_id: number | null;
  /** Status of the last lifecycle execution (null without one); once retention dropped it, the status it ended in. */
  execution_status: string | null;
  /** Whether its catalog entry is still the newest version at its path (an agent registered again as a plain playbook is not). */
  newest: boolean;
  updated_at: Date;
};

const SELECT = `SELECT r.kind, r.name, r.catalog_id, c.path, c.version, r.config, r.last_action,
                       r.last_execution_id, COALESCE(e.status, r.last_execution_status) AS execution_status,
                       GREATEST(r.updated_at, e.updated_at) AS updated_at,
                       NOT EXISTS (SELECT 1 FROM core.catalog n WHERE n.path = c.path AND n.version > c.version) AS newest
                  FROM core.resource r
                  LEFT JOIN core.catalog c ON c.catalog_id = r.catalog_id
                  LEFT JOIN core.execution e ON e.execution_id = r.last_execution_id`;

/** Every resource of a kind (`agent`, `mcp`), ordered by name. */
export async function listResources(q: Queryable, kind: string): Promise<ResourceRow[]> {
  const { rows } = await q.query<ResourceRow>(`${SELECT} WHERE r.kind = $1 ORDER BY r.name`, [kind]);
  return rows;
}

/** One resource by kind and name; undefined when absent. */
export async function getResource(q: Queryable, kind: string, name: string): Promise<ResourceRow | undefined> {
  const { rows } = await q.query<ResourceRow>(`${SELECT} WHERE r.kind = $1 AND r.name = $2`, [kind, name]);
  return rows[0];
}

/** Records that `action` was dispatched for a resource as execution `executionId`. */
export async function recordLifecycleDispatch(q: Queryable, kind: string, name: string, action: string, executionId: number): Promise<void> {
  await q.query(`UPDATE core.resource SET last_action = $3, last_execution_id = $4, last_execution_status = NULL, updated_at = now() WHERE kind = $1 AND name = $2`, [kind, name, action, executionId]);
}
