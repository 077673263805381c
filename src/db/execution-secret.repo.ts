import type { Queryable } from './queryable.ts';

/** Stores a sealed secret under `handle` until `ttlSeconds` from now. */
export async function insertExecutionSecret(q: Queryable, handle: string, sealed: string, ttlSeconds: number): Promise<void> {
  await q.query(`INSERT INTO core.execution_secret (handle, sealed, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`, [handle, sealed, ttlSeconds]);
}

/** The sealed secret of `handle` while it has not expired; undefined otherwise. Expired rows are removed on the way. */
export async function getExecutionSecret(q: Queryable, handle: string): Promise<string | undefined> {
  await q.query(`DELETE FROM core.execution_secret WHERE expires_at < now()`);
  const { rows } = await q.query<{ sealed: string }>(`SELECT sealed FROM core.execution_secret WHERE handle = $1 AND expires_at >= now()`, [handle]);
  return rows[0]?.sealed;
}
