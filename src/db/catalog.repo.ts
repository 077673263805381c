import type { Queryable } from './queryable.ts';

export type CatalogRow = {
  catalog_id: number;
  path: string;
  version: number;
  kind: string;
  content: string;
  payload: unknown;
  created_at: Date;
};

const COLUMNS = 'catalog_id, path, version, kind, content, payload, created_at';

/**
 * Stores a new version of `path` (version = previous + 1), or answers the newest version with
 * `unchanged: true` when its kind and content are these; call inside a transaction.
 */
export async function insertCatalogVersion(
  q: Queryable,
  entry: { path: string; kind: string; content: string; payload: unknown },
): Promise<CatalogRow & { unchanged: boolean }> {
  // Serialises concurrent registrations of one path: versions never collide, and of two identical
  // registrations at once the second sees the first's version (a new snapshot after the lock).
  await q.query(`SELECT pg_advisory_xact_lock(hashtext('catalog:' || $1))`, [entry.path]);
  const newest = await q.query<CatalogRow>(
    `SELECT ${COLUMNS} FROM core.catalog WHERE path = $1 ORDER BY version DESC LIMIT 1`,
    [entry.path],
  );
  const head = newest.rows[0];
  if (head && head.kind === entry.kind && head.content === entry.content) return { ...head, unchanged: true };
  // The lock holds the path: the newest version just read is the one to follow.
  const { rows } = await q.query<CatalogRow>(
    `INSERT INTO core.catalog (path, version, kind, content, payload) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${COLUMNS}`,
    [entry.path, (head?.version ?? 0) + 1, entry.kind, entry.content, JSON.stringify(entry.payload)],
  );
  return { ...rows[0], unchanged: false };
}

export type CatalogVersionRow = { version: number; catalog_id: number; kind: string; created_at: Date; content_hash: string };

/** Every version of a path, newest first, with the SHA-256 (hex) of its content; empty when none. */
export async function listCatalogVersions(q: Queryable, path: string): Promise<CatalogVersionRow[]> {
  const { rows } = await q.query<CatalogVersionRow>(
    `SELECT version, catalog_id, kind, created_at, encode(sha256(convert_to(content, 'UTF8')), 'hex') AS content_hash
       FROM core.catalog WHERE path = $1 ORDER BY version DESC`,
    [path],
  );
  return rows;
}

/** The newest version of a path, or a given version; undefined when absent. */
export async function getCatalogEntry(q: Queryable, path: string, version?: number): Promise<CatalogRow | undefined> {
  const { rows } =
    version === undefined
      ? await q.query<CatalogRow>(`SELECT ${COLUMNS} FROM core.catalog WHERE path = $1 ORDER BY version DESC LIMIT 1`, [path])
      : await q.query<CatalogRow>(`SELECT ${COLUMNS} FROM core.catalog WHERE path = $1 AND version = $2`, [path, version]);
  return rows[0];
}

export async function getCatalogById(q: Queryable, catalogId: number): Promise<CatalogRow | undefined> {
  const { rows } = await q.query<CatalogRow>(`SELECT ${COLUMNS} FROM core.catalog WHERE catalog_id = $1`, [catalogId]);
  return rows[0];
}

export type CatalogListRow = Omit<CatalogRow, 'content' | 'payload'> & { name: string | null; versions: number };

/**
 * The newest version of every path, ordered by path; with a kind, only the paths whose newest
 * version is of it. The kind filters after the newest is chosen: an agent registered again as a
 * plain playbook is no agent any more (it no longer runs as one), and `versions` counts all of them.
 */
export async function listCatalog(q: Queryable, kind?: string): Promise<CatalogListRow[]> {
  const { rows } = await q.query<CatalogListRow>(
    `SELECT * FROM (
       SELECT DISTINCT ON (path) catalog_id, path, version, kind, created_at,
              payload->'metadata'->>'name' AS name,
              count(*) OVER (PARTITION BY path)::int AS versions
         FROM core.catalog
        ORDER BY path, version DESC) newest
      WHERE ($1::text IS NULL OR kind = $1)
      ORDER BY path`,
    [kind ?? null],
  );
  return rows;
}

/** The newest catalog_id of a path (no content), as starting executions needs it. */
export type CatalogHead = { catalog_id: number; path: string; kind: string; version: number };
