import type { Queryable } from './queryable.ts';

/** A row of core.api_token as listings show it: never the hash. */
export type ApiTokenRow = {
  name: string;
  role: string;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const COLUMNS = 'name, role, prefix, created_at, last_used_at, revoked_at';

/** Stores a new token by its hash; undefined when the name is taken (revoked tokens keep theirs). */
export async function insertApiToken(q: Queryable, t: { name: string; role: string; hash: string; prefix: string }): Promise<ApiTokenRow | undefined> {
  const { rows } = await q.query<ApiTokenRow>(
    `INSERT INTO core.api_token (name, role, hash, prefix) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
    [t.name, t.role, t.hash, t.prefix],
  );
  return rows[0];
}

/** Every token, oldest first. */
export async function listApiTokens(q: Queryable): Promise<ApiTokenRow[]> {
  const { rows } = await q.query<ApiTokenRow>(`SELECT ${COLUMNS} FROM core.api_token ORDER BY id`);
  return rows;
}

/** Revokes the named token; its row (already revoked or not), or undefined when no token has that name. */
export async function revokeApiToken(q: Queryable, name: string): Promise<ApiTokenRow | undefined> {
  const { rows } = await q.query<ApiTokenRow>(
    `UPDATE core.api_token SET revoked_at = coalesce(revoked_at, now()) WHERE name = $1 RETURNING ${COLUMNS}`,
    [name],
  );
  return rows[0];
}

/**
 * The live (unrevoked) token with this hash, stamping its last use; undefined for an unknown or
 * revoked one. One statement: the caller caches the answer, so this runs a few times a minute per token.
 */
export async function useApiToken(q: Queryable, hash: string): Promise<{ name: string; role: string } | undefined> {
  const { rows } = await q.query<{ name: string; role: string }>(
    `UPDATE core.api_token SET last_used_at = now() WHERE hash = $1 AND revoked_at IS NULL RETURNING name, role`,
    [hash],
  );
  return rows[0];
}
