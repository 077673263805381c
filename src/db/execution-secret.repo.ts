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
