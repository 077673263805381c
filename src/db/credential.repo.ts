import type { Queryable } from './queryable.ts';

/** A row of core.credential; `data_encrypted` is sealed text, opened only in the API layer. */
export type CredentialRow = {
  id: number;
  name: string;
  type: string;
  data_encrypted: string;
  schema: unknown;
  meta: unknown;
  tags: string[];
  description: string | null;
  created_at: Date;
  updated_at: Date;
};

export type CredentialWrite = {
  name: string;
  type: string;
  dataEncrypted: string;
  schema: unknown;
  meta: unknown;
  tags: string[];
  description: string | null;
};

const COLUMNS = 'id, name, type, data_encrypted, schema, meta, tags, description, created_at, updated_at';

/** jsonb parameters go as JSON text; null stays SQL NULL (not the JSON literal null). */
const jsonParam = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** Serialises writers of one credential name until the transaction ends; call inside a transaction. */
export async function lockCredentialName(q: Queryable, name: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(hashtext('credential:' || $1))`, [name]);
}

export async function getCredentialByName(q: Queryable, name: string): Promise<CredentialRow | undefined> {
  const { rows } = await q.query<CredentialRow>(`SELECT ${COLUMNS} FROM core.credential WHERE name = $1`, [name]);
  return rows[0];
}

export async function getCredentialById(q: Queryable, id: number): Promise<CredentialRow | undefined> {
  const { rows } = await q.query<CredentialRow>(`SELECT ${COLUMNS} FROM core.credential WHERE id = $1`, [id]);
  return rows[0];
}

/** Inserts a new credential; the caller holds the name lock and knows the name is free. */
export async function insertCredential(q: Queryable, c: CredentialWrite): Promise<CredentialRow> {
  const { rows } = await q.query<CredentialRow>(
    `INSERT INTO core.credential (name, type, data_encrypted, schema, meta, tags, description)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [c.name, c.type, c.dataEncrypted, jsonParam(c.schema), jsonParam(c.meta), c.tags, c.description],
  );
  return rows[0];
}

/** Replaces every stored field of the credential named `c.name`; updated_at moves to now. */
export async function updateCredential(q: Queryable, c: CredentialWrite): Promise<CredentialRow | undefined> {
  const { rows } = await q.query<CredentialRow>(
    `UPDATE core.credential
        SET type = $2, data_encrypted = $3, schema = $4, meta = $5, tags = $6, description = $7, updated_at = now()
      WHERE name = $1 RETURNING ${COLUMNS}`,
    [c.name, c.type, c.dataEncrypted, jsonParam(c.schema), jsonParam(c.meta), c.tags, c.description],
  );
  return rows[0];
}

export type CredentialFilter = { type?: string; search?: string };

/** `%`, `_` and `\` match themselves in the search text, not as LIKE wildcards. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/** Credentials of a type and/or whose name, description or a tag contains `search` (case-insensitive), by name. */
export async function listCredentials(q: Queryable, f: CredentialFilter): Promise<CredentialRow[]> {
  const { rows } = await q.query<CredentialRow>(
    `SELECT ${COLUMNS} FROM core.credential
      WHERE ($1::text IS NULL OR type = $1)
        AND ($2::text IS NULL
             OR name ILIKE $2 OR description ILIKE $2
             OR EXISTS (SELECT 1 FROM unnest(tags) AS tag WHERE tag ILIKE $2))
      ORDER BY name`,
    [f.type ?? null, f.search === undefined || f.search === '' ? null : likePattern(f.search)],
  );
  return rows;
}

/** Deletes by name; true when a row was removed. */
export async function deleteCredential(q: Queryable, name: string): Promise<boolean> {
  const { rowCount } = await q.query(`DELETE FROM core.credential WHERE name = $1`, [name]);
  return (rowCount ?? 0) > 0;
}

/** Rows sealed with a key other than `currentKid`, after `afterId` in id order, locked for the caller's transaction. */
export async function lockCredentialsToRekey(q: Queryable, currentKid: string, afterId: number, limit: number): Promise<CredentialRow[]> {
  const { rows } = await q.query<CredentialRow>(
    `SELECT ${COLUMNS} FROM core.credential
      WHERE id > $2 AND split_part(data_encrypted, '.', 2) <> $1
      ORDER BY id LIMIT $3 FOR UPDATE`,
    [currentKid, afterId, limit],
  );
  return rows;
}

/** Stores re-sealed data without touching updated_at: the credential itself did not change. */
export async function setCredentialCiphertext(q: Queryable, id: number, dataEncrypted: string): Promise<void> {
  await q.query(`UPDATE core.credential SET data_encrypted = $2 WHERE id = $1`, [id, dataEncrypted]);
}

/** How many credential rows there are, and how many are sealed with a key other than `currentKid`. */
export async function countCredentialKeys(q: Queryable, currentKid: string): Promise<{ total: number; stale: number }> {
  const { rows } = await q.query<{ total: number; stale: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE split_part(data_encrypted, '.', 2) <> $1)::int AS stale FROM core.credential`,
    [currentKid],
  );
  return rows[0];
}

/**
 * How many credential rows each key id seals (`v1.<kid>.…`, see src/crypto/seal.ts). Text in no
 * known format is left out: no key opens it, and reading it reports that on its own.
 */
export async function credentialKeyIds(q: Queryable): Promise<{ kid: string; rows: number }[]> {
  const { rows } = await q.query<{ kid: string; rows: number }>(
    `SELECT split_part(data_encrypted, '.', 2) AS kid, count(*)::int AS rows
       FROM core.credential WHERE data_encrypted ~ '^v1\\.[0-9a-f]{8}\\.'
      GROUP BY 1 ORDER BY 1`,
  );
  return rows;
}
