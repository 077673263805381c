import type { Queryable } from './queryable.ts';

/** Stores sealed secrets, each under its handle, until `ttlSeconds` from now: one statement for all. */
export async function insertExecutionSecrets(q: Queryable, secrets: readonly { handle: string; sealed: string }[], ttlSeconds: number): Promise<void> {
  if (secrets.length === 0) return;
  await q.query(
    `INSERT INTO core.execution_secret (handle, sealed, expires_at)
     SELECT s.handle, s.sealed, now() + make_interval(secs => $3) FROM unnest($1::uuid[], $2::text[]) AS s(handle, sealed)`,
    [secrets.map((s) => s.handle), secrets.map((s) => s.sealed), ttlSeconds],
  );
}

/** The sealed secret of `handle` while it has not expired; undefined otherwise. Expired rows are removed on the way. */
export async function getExecutionSecret(q: Queryable, handle: string): Promise<string | undefined> {
  await q.query(`DELETE FROM core.execution_secret WHERE expires_at < now()`);
  const { rows } = await q.query<{ sealed: string }>(`SELECT sealed FROM core.execution_secret WHERE handle = $1 AND expires_at >= now()`, [handle]);
  return rows[0]?.sealed;
}

// Live rows only: an expired handle is never opened again, so it needs no key.
const STALE_SECRET = `expires_at >= now() AND split_part(sealed, '.', 2) <> $1`;

/** The key ids live secrets are sealed with, with how many rows each (a start's check of its keys, src/crypto/check-stored-keys.ts). */
export async function executionSecretKeyIds(q: Queryable): Promise<{ kid: string; rows: number }[]> {
  const { rows } = await q.query<{ kid: string; rows: number }>(
    `SELECT split_part(sealed, '.', 2) AS kid, count(*)::int AS rows FROM core.execution_secret
      WHERE expires_at >= now() AND sealed ~ '^v1\\.[0-9a-f]{8}\\.' GROUP BY 1 ORDER BY 1`,
  );
  return rows;
}

/** How many live secrets there are, and how many are sealed with a key other than `currentKid`. */
export async function countExecutionSecretKeys(q: Queryable, currentKid: string): Promise<{ total: number; stale: number }> {
  const { rows } = await q.query<{ total: number; stale: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE ${STALE_SECRET})::int AS stale FROM core.execution_secret WHERE expires_at >= now()`,
    [currentKid],
  );
  return rows[0];
}

/** Live secrets sealed with a key other than `currentKid`, after `afterHandle` (uuid order), locked. */
export async function lockExecutionSecretsToRekey(q: Queryable, currentKid: string, afterHandle: string, limit: number): Promise<{ handle: string; sealed: string }[]> {
  const { rows } = await q.query<{ handle: string; sealed: string }>(
    `SELECT handle::text AS handle, sealed FROM core.execution_secret
      WHERE handle > $2::uuid AND ${STALE_SECRET} ORDER BY handle LIMIT $3 FOR UPDATE`,
    [currentKid, afterHandle, limit],
  );
  return rows;
}

/** Stores a re-sealed secret; its expiry stays as it was. */
export async function setExecutionSecretCiphertext(q: Queryable, handle: string, sealed: string): Promise<void> {
  await q.query(`UPDATE core.execution_secret SET sealed = $2 WHERE handle = $1::uuid`, [handle, sealed]);
}
