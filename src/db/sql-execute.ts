import pg from 'pg';
import * as v from 'valibot';
import { BODY_LIMIT_BYTES } from '../body-limit.ts';
import { withDatabaseLogin } from '../database-login.ts';
import { boundedQuery } from '../credential/bounded-query.ts';
import { POSTGRES_VALUE_SET_LOCAL, postgresValueTypes } from '../credential/postgres-value-types.ts';
import { classifyDatabaseError, isDatabaseUnavailable, isLoginRefused } from './classify-database-error.ts';
import type { Db } from './db.ts';
import { scramVerifier } from './scram-verifier.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

/** Longest a statement of POST /api/postgres/execute may run, enforced by the server (SET LOCAL). */
export const SQL_STATEMENT_TIMEOUT_MS = 30_000;
// A target that does not answer within this is reported as a connection error.
const SQL_CONNECT_TIMEOUT_MS = 10_000;
// Client-side backstop past the server's own timeout, for a server that never answers at all.
const SQL_CLIENT_GRACE_MS = 5_000;
const APPLICATION_NAME = 'svc-sql-execute';
// invalid_password; invalid_authorization_specification ("not permitted to log in").
const AUTH_FAILED_SQLSTATES = new Set(['28P01', '28000']);

/** The most rows (as JSON) a statement answers: the server's request body limit, a bound on what it holds. */
const SQL_RESULT_MAX_BYTES = BODY_LIMIT_BYTES;
const QueryResultSchema = v.looseObject({ rows: v.array(ownKeysRecord(v.string(), v.unknown())) });

const RESULT_TOO_LARGE = `the statement's rows came to over ${SQL_RESULT_MAX_BYTES / (1024 * 1024)} MiB, the most an answer holds: narrow it (LIMIT, fewer columns); nothing was committed`;

/** A failed connect or statement. `message` is the database's (or driver's) own; callers redact secrets. */
export class SqlExecutionError extends Error {
  override name = 'SqlExecutionError';
  readonly phase: 'connect' | 'statement' | 'setup';
  readonly sqlstate: string | undefined;
  constructor(phase: 'connect' | 'statement' | 'setup', message: string, sqlstate?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.phase = phase;
    this.sqlstate = sqlstate;
  }
}

function describe(err: unknown): { message: string; sqlstate: string | undefined } {
  if (err instanceof Error) {
    const code = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
    // AggregateError (several addresses refused) has an empty message of its own.
    const message = err.message || (err instanceof AggregateError ? err.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ') : err.name);
    return { message, sqlstate: code };
  }
  return { message: String(err), sqlstate: undefined };
}

export type StatementOptions = {
  /** Schema name for search_path; the caller has checked it is a plain identifier. */
  schema?: string;
  timeoutMs?: number;
  /**
   * The transaction is rolled back, never committed: nothing the statement does outlasts it (a
   * large object, a NOTIFY, a transaction's advisory lock: PostgreSQL grants the functions for
   * those to every role, and only a superuser could take them back).
   */
  rollBack?: boolean;
};

/**
 * Runs ONE statement (extended protocol: a second statement is refused by the server) on a
 * short-lived connection, inside a transaction with SET LOCAL statement_timeout and search_path.
 * Returns the rows (empty for commands), their values read by postgresValueTypes; throws SqlExecutionError.
 */
export async function runStatement(config: pg.ClientConfig, sql: string, opts: StatementOptions = {}): Promise<Record<string, unknown>[]> {
  const timeoutMs = Math.max(1, Math.floor(opts.timeoutMs ?? SQL_STATEMENT_TIMEOUT_MS));
  const client = new pg.Client({
    ...config,
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: SQL_CONNECT_TIMEOUT_MS,
    query_timeout: timeoutMs + SQL_CLIENT_GRACE_MS,
    // Values as PostgreSQL has them (exact bigints, bytea, dates), not the service pool's parsers.
    types: postgresValueTypes,
  });
  // A backend that goes away emits 'error' on the client; the pending query reports it.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    const { message, sqlstate } = describe(err);
    await client.end().catch(() => {});
    throw new SqlExecutionError('connect', message, sqlstate, { cause: err });
  }
  // Past the limit the connection is ended: the backend goes, its transaction with it.
  let tooLarge = false;
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
    if (opts.schema !== undefined) await client.query(`SET LOCAL search_path TO ${pg.escapeIdentifier(opts.schema)}`);
    await client.query(POSTGRES_VALUE_SET_LOCAL);
    // queryMode is not in @types/pg; a typed variable (not a literal) carries it through.
    const statement: pg.QueryConfig & { queryMode: 'extended' } = { text: sql, queryMode: 'extended' };
    const result = v.parse(QueryResultSchema, await boundedQuery(client, statement, SQL_RESULT_MAX_BYTES, () => {
      tooLarge = true;
      void client.end().catch(() => {});
    }));
    if (tooLarge) throw new SqlExecutionError('statement', RESULT_TOO_LARGE);
    await client.query(opts.rollBack ? 'ROLLBACK' : 'COMMIT');
    return result.rows;
  } catch (err) {
    if (tooLarge) throw new SqlExecutionError('statement', RESULT_TOO_LARGE);
    await client.query('ROLLBACK').catch(() => {});
    const { message, sqlstate } = describe(err);
    throw new SqlExecutionError('statement', message, sqlstate, { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
}

// The reader role's name per database (see migrations/0002_credentials.sql), asked once per Db.
const readerRoles = new WeakMap<Db, Promise<string>>();

function readerRoleName(db: Db): Promise<string> {
  let role = readerRoles.get(db);
  if (!role) {
    role = db
      .query<{ role: string }>(`SELECT 'svc_sql_reader_' || left(md5(current_database()), 8) AS role`)
      .then((r) => r.rows[0].role);
    role.catch(() => readerRoles.delete(db));
    readerRoles.set(db, role);
  }
  return role;
}

/** Gives the reader role LOGIN with `password` (the service user needs CREATEROLE, as for the migration). */
async function prepareReaderRole(db: Db, role: string, password: string): Promise<void> {
  const { rows } = await db.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [role]);
  if (rows.length === 0) {
    throw new SqlExecutionError(
      'setup',
      `SQL against the service database is unavailable: role ${role} does not exist (migration 0002_credentials.sql needs a service user with CREATEROLE)`,
    );
  }
  try {
    // Its SCRAM secret, not the password: the statement's text may be logged or shown in pg_stat_activity.
    await db.query(`ALTER ROLE ${pg.escapeIdentifier(role)} WITH LOGIN PASSWORD ${pg.escapeLiteral(await scramVerifier(password))}`);
  } catch (err) {
    // The database away or taking no writes for now (25006) is the request's 503, sent again later.
    if (isDatabaseUnavailable(err)) throw err;
    const { sqlstate } = describe(err);
    throw new SqlExecutionError('setup', `SQL against the service database is unavailable: role ${role} cannot be given a login (${sqlstate ?? 'error'})`, sqlstate);
  }
}

/**
 * Runs one statement against the service database in a session authenticated as its reader
 * role (no superuser, read-only core access, no credential or keychain data), never as the
 * service user: a statement cannot RESET ROLE its way back; rolled back, it leaves nothing behind.
 * `password` must be the same on every server of the deployment (derived from the shared key); a
 * mismatch re-sets it once.
 */
export async function runAsServiceReader(db: Db, password: string, sql: string, opts: StatementOptions = {}): Promise<Record<string, unknown>[]> {
  const role = await readerRoleName(db);
  const config: pg.ClientConfig = { connectionString: readerUrl(db, role, password) };
  const reading: StatementOptions = { ...opts, rollBack: true };
  try {
    return await runStatement(config, sql, reading);
  } catch (err) {
    if (!(err instanceof SqlExecutionError) || err.phase !== 'connect' || !AUTH_FAILED_SQLSTATES.has(err.sqlstate ?? '')) throw serviceDatabaseError(err);
  }
  // First use on this database, or the key (and so the password) changed: set it, try once more.
  await prepareOnce(db, role, password);
  return runStatement(config, sql, reading).catch((err: unknown) => {
    throw serviceDatabaseError(err);
  });
}

// The service's own database going away is `database_unavailable`, as for every other route;
// the statement's other failures stay SqlExecutionErrors (the caller's 400).
function serviceDatabaseError(err: unknown): unknown {
  if (!(err instanceof SqlExecutionError)) return err;
  // The caller's statement raised it (pg_database_size of a database that is not there): its 400.
  if (err.phase === 'statement' && isLoginRefused(err.cause)) return err;
  const classified = classifyDatabaseError(err.cause);
  return classified === err.cause ? err : classified;
}

/**
 * The service database's URL as its reader role, the role given its login now: for the workers
 * of this process, whose `read_only` postgres tasks read the service database through it.
 * Throws SqlExecutionError('setup') when the role cannot log in.
 */
export async function serviceReaderUrl(db: Db, password: string): Promise<string> {
  const login = await serviceReaderLogin(db, password);
  return readerUrl(db, login.user, login.password);
}

/**
 * The reader role's user name and `password`, the role given its login now: for `svc worker`
 * pools, which put them in their own URL of the service database. Throws SqlExecutionError('setup').
 */
export async function serviceReaderLogin(db: Db, password: string): Promise<{ user: string; password: string }> {
  const role = await readerRoleName(db);
  await prepareOnce(db, role, password);
  return { user: role, password };
}

// Concurrent ALTER ROLEs of one role fail ("tuple concurrently updated"): one at a time per Db.
const preparing = new WeakMap<Db, Promise<void>>();

function prepareOnce(db: Db, role: string, password: string): Promise<void> {
  let p = preparing.get(db);
  if (!p) {
    p = prepareReaderRole(db, role, password).finally(() => preparing.delete(db));
    preparing.set(db, p);
  }
  return p;
}

function readerUrl(db: Db, role: string, password: string): string {
  return withDatabaseLogin(db.url, role, password);
}
