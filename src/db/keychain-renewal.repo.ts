import type { Queryable } from './queryable.ts';

/**
 * Takes the renewal lease of `cacheKey` for `seconds` unless another live one holds it: one
 * statement, so of concurrent callers exactly one is granted. False: another worker holds it.
 * (Whether the entry is live meanwhile is the caller's to read: this table alone, for Citus.)
 */
export async function takeKeychainRenewal(q: Queryable, cacheKey: string, leaseId: string, seconds: number, now: Date): Promise<boolean> {
  const { rows } = await q.query(
    `INSERT INTO core.keychain_renewal (cache_key, lease_id, expires_at)
     VALUES ($1, $2::uuid, $4::timestamptz + make_interval(secs => $3))
     ON CONFLICT (cache_key) DO UPDATE SET lease_id = EXCLUDED.lease_id, expires_at = EXCLUDED.expires_at
      WHERE core.keychain_renewal.expires_at <= $4
     RETURNING 1`,
    [cacheKey, leaseId, seconds, now],
  );
  return rows.length > 0;
}

/** Ends the renewal of `cacheKey`: that lease only, or whichever is held when `leaseId` is null (the entry was stored). */
export async function endKeychainRenewal(q: Queryable, cacheKey: string, leaseId: string | null): Promise<void> {
  await q.query(`DELETE FROM core.keychain_renewal WHERE cache_key = $1 AND ($2::uuid IS NULL OR lease_id = $2::uuid)`, [cacheKey, leaseId]);
}

/**
 * Deletes renewal leases that expired over `graceSeconds` ago (a holder that died, or an entry
 * whose execution ended meanwhile); returns how many. An expired lease is as good as none to a
 * take, so this changes no answer: it keeps the table from growing with every lease left behind.
 */
export async function deleteExpiredKeychainRenewals(q: Queryable, graceSeconds: number): Promise<number> {
  const { rowCount } = await q.query(`DELETE FROM core.keychain_renewal WHERE expires_at < now() - make_interval(secs => $1)`, [graceSeconds]);
  return rowCount ?? 0;
}
