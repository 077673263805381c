import type { Queryable } from './queryable.ts';

/**
 * A row of core.keychain. `data_encrypted` is sealed text; `renew_config` is a JSON string of
 * sealed text when this service wrote it (it may hold client secrets), an object in older rows.
 */
export type KeychainRow = {
  cache_key: string;
  keychain_name: string;
  catalog_id: number;
  credential_type: string;
  cache_type: 'secret' | 'token';
  scope_type: 'local' | 'global' | 'shared';
  execution_id: number | null;
  parent_execution_id: number | null;
  data_encrypted: string;
  schema: unknown;
  expires_at: Date;
  created_at: Date;
  accessed_at: Date;
  access_count: number;
  auto_renew: boolean;
  renew_config: unknown;
};

/** A row to store; `credential_type` null keeps the stored entry's. */
export type KeychainWrite = Omit<KeychainRow, 'created_at' | 'accessed_at' | 'access_count' | 'credential_type'> & { credential_type: string | null };

const COLUMNS = `cache_key, keychain_name, catalog_id, credential_type, cache_type, scope_type, execution_id,
  parent_execution_id, data_encrypted, schema, expires_at, created_at, accessed_at, access_count, auto_renew, renew_config`;

const jsonParam = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

export async function catalogExists(q: Queryable, catalogId: number): Promise<boolean> {
  const { rows } = await q.query(`SELECT 1 FROM core.catalog WHERE catalog_id = $1`, [catalogId]);
  return rows.length > 0;
}

/**
 * Root of an execution's tree (core.execution.root_execution_id); the id itself when no
 * execution row exists, so shared entries of not-yet-projected executions still key consistently.
 */
export async function rootExecutionId(q: Queryable, executionId: number): Promise<number> {
  const { rows } = await q.query<{ root_execution_id: number }>(
    `SELECT root_execution_id FROM core.execution WHERE execution_id = $1`,
    [executionId],
  );
  return rows[0]?.root_execution_id ?? executionId;
}

export async function getKeychainEntry(q: Queryable, cacheKey: string): Promise<KeychainRow | undefined> {
  const { rows } = await q.query<KeychainRow>(`SELECT ${COLUMNS} FROM core.keychain WHERE cache_key = $1`, [cacheKey]);
  return rows[0];
}

/**
 * Counts one read of a still-live entry in one statement (no lost increments under concurrency)
 * and returns the row as counted; undefined when the row is gone or expired at `now`.
 */
export async function recordKeychainAccess(q: Queryable, cacheKey: string, now: Date): Promise<KeychainRow | undefined> {
  const { rows } = await q.query<KeychainRow>(
    `UPDATE core.keychain SET access_count = access_count + 1, accessed_at = $2
      WHERE cache_key = $1 AND expires_at > $2 RETURNING ${COLUMNS}`,
    [cacheKey, now],
  );
  return rows[0];
}

/**
 * Stores (or replaces) an entry: a replaced entry starts over with a zero access count. A write
 * without `credential_type` keeps the stored entry's; null (nothing written) when none is stored.
 */
export async function upsertKeychainEntry(q: Queryable, e: KeychainWrite): Promise<{ row: KeychainRow; created: boolean } | null> {
  const { rows } = await q.query<KeychainRow & { created: boolean }>(
    `INSERT INTO core.keychain (cache_key, keychain_name, catalog_id, credential_type, cache_type, scope_type, execution_id,
                                parent_execution_id, data_encrypted, schema, expires_at, auto_renew, renew_config)
     SELECT $1::text, $2::text, $3::bigint, COALESCE($4::text, stored.credential_type), $5::text, $6::text, $7::bigint,
            $8::bigint, $9::text, $10::jsonb, $11::timestamptz, $12::boolean, $13::jsonb
       FROM (SELECT 1) AS one LEFT JOIN core.keychain stored ON stored.cache_key = $1
      WHERE COALESCE($4::text, stored.credential_type) IS NOT NULL
     ON CONFLICT (cache_key) DO UPDATE SET
       keychain_name = EXCLUDED.keychain_name, catalog_id = EXCLUDED.catalog_id,
       credential_type = EXCLUDED.credential_type, cache_type = EXCLUDED.cache_type, scope_type = EXCLUDED.scope_type,
       execution_id = EXCLUDED.execution_id, parent_execution_id = EXCLUDED.parent_execution_id,
       data_encrypted = EXCLUDED.data_encrypted, schema = EXCLUDED.schema, expires_at = EXCLUDED.expires_at,
       auto_renew = EXCLUDED.auto_renew, renew_config = EXCLUDED.renew_config,
       created_at = now(), accessed_at = now(), access_count = 0
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    [
      e.cache_key,
      e.keychain_name,
      e.catalog_id,
      e.credential_type,
      e.cache_type,
      e.scope_type,
      e.execution_id,
      e.parent_execution_id,
      e.data_encrypted,
      jsonParam(e.schema),
      e.expires_at,
      e.auto_renew,
      jsonParam(e.renew_config),
    ],
  );
  if (rows.length === 0) return null;
  const { created, ...row } = rows[0];
  return { row, created };
}

/** Deletes one entry; true when a row was removed. */
export async function deleteKeychainEntry(q: Queryable, cacheKey: string): Promise<boolean> {
  const { rowCount } = await q.query(`DELETE FROM core.keychain WHERE cache_key = $1`, [cacheKey]);
  return (rowCount ?? 0) > 0;
}

/**
 * Deletes entries without auto_renew that expired over `graceSeconds` ago; returns how many. Such
 * an entry only ever answers `expired` (the worker fails the step); gone, it is made again from its
 * definition at its next use. Auto-renewing ones stay: their renew_config is how they are renewed.
 */
export async function deleteExpiredKeychainEntries(q: Queryable, graceSeconds: number): Promise<number> {
  const { rowCount } = await q.query(`DELETE FROM core.keychain WHERE NOT auto_renew AND expires_at < now() - make_interval(secs => $1)`, [graceSeconds]);
  return rowCount ?? 0;
}

export type KeychainListRow = Pick<
  KeychainRow,
  'keychain_name' | 'cache_key' | 'scope_type' | 'credential_type' | 'expires_at' | 'auto_renew' | 'access_count'
>;

/** Every entry of a catalog entry (expired ones included), by name then cache key; no sealed data. */
export async function listKeychainByCatalog(q: Queryable, catalogId: number): Promise<KeychainListRow[]> {
  const { rows } = await q.query<KeychainListRow>(
    `SELECT keychain_name, cache_key, scope_type, credential_type, expires_at, auto_renew, access_count
       FROM core.keychain WHERE catalog_id = $1 ORDER BY keychain_name, cache_key`,
    [catalogId],
  );
  return rows;
}

// A sealed text's key id is its second dot-separated part (`v1.<kid>.…`); see src/crypto/seal.ts.
const STALE_KEYCHAIN = `(split_part(data_encrypted, '.', 2) <> $1
   OR (jsonb_typeof(renew_config) = 'string' AND split_part(renew_config #>> '{}', '.', 2) <> $1))`;

/** Rows with data (or a sealed renew_config) under a key other than `currentKid`, after `afterKey`, locked. */
export async function lockKeychainToRekey(q: Queryable, currentKid: string, afterKey: string, limit: number): Promise<KeychainRow[]> {
  const { rows } = await q.query<KeychainRow>(
    `SELECT ${COLUMNS} FROM core.keychain WHERE cache_key > $2 AND ${STALE_KEYCHAIN} ORDER BY cache_key LIMIT $3 FOR UPDATE`,
    [currentKid, afterKey, limit],
  );
  return rows;
}

/** Stores re-sealed data and renew_config; expiry and access statistics stay as they were. */
export async function setKeychainCiphertext(q: Queryable, cacheKey: string, dataEncrypted: string, renewConfig: unknown): Promise<void> {
  await q.query(`UPDATE core.keychain SET data_encrypted = $2, renew_config = $3 WHERE cache_key = $1`, [
    cacheKey,
    dataEncrypted,
    jsonParam(renewConfig),
  ]);
}

/** How many keychain rows there are, and how many hold data sealed with a key other than `currentKid`. */
export async function countKeychainKeys(q: Queryable, currentKid: string): Promise<{ total: number; stale: number }> {
  const { rows } = await q.query<{ total: number; stale: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE ${STALE_KEYCHAIN})::int AS stale FROM core.keychain`,
    [currentKid],
  );
  return rows[0];
}

/**
 * How many keychain rows each key id seals, counting token_data and a sealed renew_config: a row
 * whose two texts use two keys counts under both, since it needs both to be read and renewed.
 */
export async function keychainKeyIds(q: Queryable): Promise<{ kid: string; rows: number }[]> {
  const { rows } = await q.query<{ kid: string; rows: number }>(
    `SELECT split_part(sealed, '.', 2) AS kid, count(DISTINCT cache_key)::int AS rows
       FROM (SELECT cache_key, data_encrypted AS sealed FROM core.keychain
             UNION ALL
             SELECT cache_key, renew_config #>> '{}' FROM core.keychain WHERE jsonb_typeof(renew_config) = 'string') s
      WHERE sealed ~ '^v1\\.[0-9a-f]{8}\\.'
      GROUP BY 1 ORDER BY 1`,
  );
  return rows;
}
