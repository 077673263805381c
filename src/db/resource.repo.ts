// core.resource: agents and MCP servers registered from the catalog, with their last lifecycle
// execution. Every statement that writes the table is here (registration, dispatch, retention).
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

/**
 * Records that `action` was dispatched for a resource as execution `executionId`, unless a newer
 * one was: requests started at once finish in any order, and the newest started is the last action.
 */
export async function recordLifecycleDispatch(q: Queryable, kind: string, name: string, action: string, executionId: number): Promise<void> {
  await q.query(
    `UPDATE core.resource SET last_action = $3, last_execution_id = $4, last_execution_status = NULL, updated_at = now()
     WHERE kind = $1 AND name = $2 AND (last_execution_id IS NULL OR last_execution_id < $4)`,
    [kind, name, action, executionId],
  );
}

/** Records an executable resource (an agent) pointing at its newest catalog entry. */
export async function upsertResource(q: Queryable, r: { kind: string; name: string; catalogId: number; config: unknown }): Promise<void> {
  await q.query(
    `INSERT INTO core.resource (kind, name, catalog_id, config) VALUES ($1, $2, $3, $4)
     ON CONFLICT (kind, name) DO UPDATE SET catalog_id = EXCLUDED.catalog_id, config = EXCLUDED.config, updated_at = now()`,
    [r.kind, r.name, r.catalogId, JSON.stringify(r.config)],
  );
}

/**
 * Records an MCP server (by name) pointing at its document's newest catalog entry, unless the
 * name is held by a document at another path: then nothing changes and that path is returned
 * (the update's condition runs on the locked row, so two registrations cannot both take it).
 * A holder whose catalog entry is gone lets the name go.
 */
export async function upsertMcpResource(q: Queryable, r: { name: string; path: string; catalogId: number; config: unknown }): Promise<{ heldBy: string } | undefined> {
  const { rowCount } = await q.query(
    `INSERT INTO core.resource (kind, name, catalog_id, config) VALUES ('mcp', $1, $2, $3)
     ON CONFLICT (kind, name) DO UPDATE SET catalog_id = EXCLUDED.catalog_id, config = EXCLUDED.config, updated_at = now()
      WHERE COALESCE((SELECT c.path FROM core.catalog c WHERE c.catalog_id = core.resource.catalog_id), $4) = $4`,
    [r.name, r.catalogId, JSON.stringify(r.config), r.path],
  );
  if (rowCount) return undefined;
  const { rows } = await q.query<{ path: string }>(
    `SELECT c.path FROM core.resource x JOIN core.catalog c ON c.catalog_id = x.catalog_id WHERE x.kind = 'mcp' AND x.name = $1`,
    [r.name],
  );
  return { heldBy: rows[0]?.path ?? 'another path' };
}

/**
 * Retention's statement for the range [$1, $2) of execution ids, before their rows go: a resource
 * whose last lifecycle execution is in it keeps that execution's status on its own row.
 */
export const KEEP_RANGE_LAST_STATUSES = `UPDATE core.resource r SET last_execution_status = e.status FROM core.execution e
               WHERE e.execution_id = r.last_execution_id AND e.execution_id >= $1 AND e.execution_id < $2`;
