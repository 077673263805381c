import type { Queryable } from './queryable.ts';

/** A row of core.api_token as listings show it: never the hash. `expired`: past expires_at by the database's clock. */
export type ApiTokenRow = {
  name: string;
  role: string;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date | null;
  expired: boolean;
};

const COLUMNS = 'name, role, prefix, created_at, last_used_at, revoked_at, expires_at, (expires_at IS NOT NULL AND expires_at <= now()) AS expired';

/** A token's lifetime: until a time, or for this many milliseconds from its creation (the database's clock). */
export type ApiTokenExpiry = { at: Date } | { inMs: number };

/**
 * Stores a new token by its hash, with its expiry (none: it never expires); undefined when the
 * name is taken (revoked tokens keep theirs). Throws (check violation 23514) when `at` has passed.
 */
export async function insertApiToken(
  q: Queryable,
  t: { name: string; role: string; hash: string; prefix: string; expires?: ApiTokenExpiry },
): Promise<ApiTokenRow | undefined> {
  const at = t.expires && 'at' in t.expires ? t.expires.at : null;
  const inMs = t.expires && 'inMs' in t.expires ? t.expires.inMs : null;
  const { rows } = await q.query<ApiTokenRow>(
    `INSERT INTO core.api_token (name, role, hash, prefix, expires_at)
     VALUES ($1, $2, $3, $4, coalesce($5::timestamptz, now() + $6::float8 * interval '1 millisecond'))
     ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
    [t.name, t.role, t.hash, t.prefix, at, inMs],
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
 * An unrevoked token as one lookup finds it: live with `leftMs` of its lifetime left (null: no
 * expiry), or expired since `expires_at`. Both by the database's clock, so servers agree.
 */
export type UsedApiToken = { name: string; role: string } & ({ expired: false; leftMs: number | null } | { expired: true; expires_at: Date });

/**
 * The unrevoked token with this hash, stamping its last use unless it has expired; undefined for
 * an unknown or revoked one. One statement: the caller caches the answer, so this runs a few
 * times a minute per token.
 */
export async function useApiToken(q: Queryable, hash: string): Promise<UsedApiToken | undefined> {
  const { rows } = await q.query<{ name: string; role: string; expires_at: Date | null; left_ms: number | null }>(
    `UPDATE core.api_token
        SET last_used_at = CASE WHEN expires_at IS NULL OR expires_at > now() THEN now() ELSE last_used_at END
      WHERE hash = $1 AND revoked_at IS NULL
      RETURNING name, role, expires_at, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS left_ms`,
    [hash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { name, role, expires_at, left_ms } = row;
  if (expires_at !== null && left_ms !== null && left_ms <= 0) return { name, role, expired: true, expires_at };
  return { name, role, expired: false, leftMs: left_ms };
}

/**
 * The hashes of every unrevoked token not yet expired: what an address past its refused
 * credentials may still present (src/api/failed-token-limit.ts). A few rows: tokens are made by hand.
 */
export async function liveApiTokenHashes(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ hash: string }>(
    `SELECT hash FROM core.api_token WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
  );
  return rows.map((r) => r.hash);
}
