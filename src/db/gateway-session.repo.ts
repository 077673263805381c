// The gateways' shared sessions and logins in progress (migrations/0022_gateway_sessions.sql).
// Rows are found by the SHA-256 of the cookie's value (hex), never by the value; expiry is judged
// on the database's clock, so gateways with drifting clocks agree. Durations are milliseconds.
import type pg from 'pg';
import { DB_CONNECT_TIMEOUT_MS } from './db.ts';
import type { Queryable } from './queryable.ts';

/** What a live session lets the gateway know on each request (never its sealed ID token). */
export type GatewaySessionRow = {
  sub: string;
  name: string | null;
  email: string | null;
  role: string | null;
  paths: string[] | null;
};

const ms = (n: number): string => `($${n}::float8 * interval '1 millisecond')`;

/**
 * Longest a request's statement here waits for the database's answer, in ms: as long as a
 * connection may take. A database that hangs (or a network that drops its packets) keeps the
 * connections already open, and without a bound a request with a session cookie waited on one
 * for ever; past it the statement fails as `database_unavailable` (a 503 with Retry-After) and
 * pg-pool discards that connection. Every statement of a request is one row by key.
 */
export const GATEWAY_STATEMENT_TIMEOUT_MS = DB_CONNECT_TIMEOUT_MS;

/** A request's statement, bounded by GATEWAY_STATEMENT_TIMEOUT_MS (pg's client-side `query_timeout`). */
const bounded = (text: string, values: unknown[], name?: string): pg.QueryConfig & { query_timeout: number } => ({
  ...(name === undefined ? {} : { name }),
  text,
  values,
  query_timeout: GATEWAY_STATEMENT_TIMEOUT_MS,
});

/** Starts a session: idle expiry `idleMs` from now, never past `maxMs` from now. */
export async function insertGatewaySession(
  q: Queryable,
  s: GatewaySessionRow & { idHash: string; idToken: string | null; idleMs: number; maxMs: number },
): Promise<void> {
  await q.query(bounded(
    `INSERT INTO core.gateway_session (id_hash, sub, name, email, role, paths, id_token, expires_at, max_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + least(${ms(8)}, ${ms(9)}), now() + ${ms(9)})`,
    [s.idHash, s.sub, s.name, s.email, s.role, s.paths, s.idToken, s.idleMs, s.maxMs],
  ));
}

/**
 * The live session of `idHash`, or undefined when unknown or expired. One statement: it also
 * moves the idle expiry to `idleMs` from now (never past the absolute end), but writes only
 * when that moves it by more than `renewStepMs`, so a busy session is written once a step.
 */
export async function useGatewaySession(q: Queryable, idHash: string, idleMs: number, renewStepMs: number): Promise<GatewaySessionRow | undefined> {
  // Prepared (named): every request with a session cookie sends it, and planning it cost more
  // than running it.
  const { rows } = await q.query<GatewaySessionRow>(bounded(
    `WITH live AS (
       SELECT id_hash, sub, name, email, role, paths, expires_at, max_expires_at
         FROM core.gateway_session WHERE id_hash = $1 AND expires_at > now()
     ), renewed AS (
       UPDATE core.gateway_session g SET expires_at = least(now() + ${ms(2)}, live.max_expires_at)
         FROM live
        WHERE g.id_hash = live.id_hash AND live.expires_at < least(now() + ${ms(2)} - ${ms(3)}, live.max_expires_at)
        RETURNING g.id_hash
     )
     SELECT sub, name, email, role, paths FROM live`,
    [idHash, idleMs, renewStepMs],
    'svc_use_gateway_session',
  ));
  return rows[0];
}

/**
 * True while the session of `idHash` is live (not ended, not expired), without renewing it: an
 * open stream checks its caller so, and is no use of the session by its person.
 */
export async function gatewaySessionIsLive(q: Queryable, idHash: string): Promise<boolean> {
  const { rows } = await q.query(bounded('SELECT 1 FROM core.gateway_session WHERE id_hash = $1 AND expires_at > now()', [idHash]));
  return rows.length > 0;
}

/** Ends the session of `idHash` (expired or not); its subject and sealed ID token when it existed. */
export async function deleteGatewaySession(q: Queryable, idHash: string): Promise<{ sub: string; id_token: string | null } | undefined> {
  const { rows } = await q.query<{ sub: string; id_token: string | null }>(
    bounded('DELETE FROM core.gateway_session WHERE id_hash = $1 RETURNING sub, id_token', [idHash]),
  );
  return rows[0];
}

/** Ends every session of the person `sub` at every gateway; how many there were. */
export async function deleteGatewaySessionsOf(q: Queryable, sub: string): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM core.gateway_session WHERE sub = $1', [sub]);
  return rowCount ?? 0;
}

/** Remembers a login in progress (sealed) for `ttlMs`. */
export async function insertGatewayLogin(q: Queryable, idHash: string, sealed: string, ttlMs: number): Promise<void> {
  await q.query(bounded(`INSERT INTO core.gateway_login (id_hash, sealed, expires_at) VALUES ($1, $2, now() + ${ms(3)})`, [idHash, sealed, ttlMs]));
}

/** Takes (deletes) the login in progress of `idHash`; its sealed text unless unknown or expired. */
export async function takeGatewayLogin(q: Queryable, idHash: string): Promise<string | undefined> {
  const { rows } = await q.query<{ sealed: string; live: boolean }>(
    bounded('DELETE FROM core.gateway_login WHERE id_hash = $1 RETURNING sealed, expires_at > now() AS live', [idHash]),
  );
  return rows[0]?.live ? rows[0].sealed : undefined;
}

/**
 * Deletes up to `limit` expired sessions and up to `limit` expired logins; how many of each.
 * Rows another gateway's sweep holds are skipped, so sweeps on many gateways never wait on each other.
 */
export async function deleteExpiredGatewaySessions(q: Queryable, limit: number): Promise<{ sessions: number; logins: number }> {
  const { rows } = await q.query<{ sessions: number; logins: number }>(
    `WITH s AS (
       DELETE FROM core.gateway_session WHERE id_hash IN (
         SELECT id_hash FROM core.gateway_session WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING 1
     ), l AS (
       DELETE FROM core.gateway_login WHERE id_hash IN (
         SELECT id_hash FROM core.gateway_login WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM s)::int AS sessions, (SELECT count(*) FROM l)::int AS logins`,
    [limit],
  );
  return rows[0];
}

/** True when this database has the gateway's tables (the server's migrations made them). */
export async function gatewaySessionTablesExist(q: Queryable): Promise<boolean> {
  const { rows } = await q.query<{ ok: boolean }>(
    `SELECT to_regclass('core.gateway_session') IS NOT NULL AND to_regclass('core.gateway_login') IS NOT NULL AS ok`,
  );
  return rows[0].ok;
}
