import pg from 'pg';
import * as v from 'valibot';
import { ANSWER_MAX_BYTES, ANSWER_MAX_TEXT } from './answer-limit.ts';
import { aborted, fail, invalidTask, ok } from './outcome.ts';
import { postgresConnection } from '../../credential/postgres-connection.ts';
import { POSTGRES_VALUE_OPTIONS, postgresValueTypes } from '../../credential/postgres-value-types.ts';
import { redactSecrets } from '../../credential/redact-secrets.ts';
import { boundedQuery } from '../../credential/bounded-query.ts';
import type { RenderedTask, TaskOutcome, ToolContext } from './types.ts';
import { MAX_TIMER_MS } from '../../config.ts';
import { READER_STATEMENT_TIMEOUT_MS } from '../../reader-statement-timeout.ts';

// The cancel request sent on abort gets this long before it is given up.
const PG_CANCEL_TIMEOUT_MS = 5_000;
const SQLSTATE_QUERY_CANCELED = '57014';
// A backslash in a '' string is an ordinary character (the literals a template's outputs are
// written as rely on it: src/dsl/sql-literals.ts), whatever the server's default. Dates and
// bytea printed as the result's parsers expect (postgres-value-types.ts).
const SESSION_OPTIONS = `-c standard_conforming_strings=on ${POSTGRES_VALUE_OPTIONS}`;
// Every transaction of a read_only task's session starts read-only (a write fails with 25006).
const READ_ONLY_SESSION_OPTIONS = `${SESSION_OPTIONS} -c default_transaction_read_only=on`;

const PostgresTaskSchema = v.looseObject({
  command: v.pipe(v.string(), v.nonEmpty()),
  params: v.optional(v.nullable(v.array(v.unknown()))),
  timeout_seconds: v.optional(v.unknown()),
  read_only: v.optional(v.boolean()),
});
const QueryResultSchema = v.looseObject({ rows: v.array(v.unknown()), rowCount: v.nullable(v.number()), command: v.nullable(v.string()) });
const DatabaseErrorSchema = v.looseObject({ message: v.string(), code: v.optional(v.string()) });
const BackendSchema = v.looseObject({ processID: v.number() });

export type PostgresData = { rows: unknown[]; row_count: number | null; command: string | null };

/**
 * Runs one SQL `command` with bind `params` on its own short-lived connection (the credential's
 * database, else the service database when allowed); data `{rows, row_count, command}`. Several
 * statements without params report the last one. Messages never hold the password or URL.
 * `read_only: true`: one statement, in a read-only transaction rolled back after it (it leaves
 * nothing behind); without `auth` it reads the
 * service database as its reader role (no write grant, no secret column), never as the service user.
 */
export async function postgres(task: RenderedTask, ctx: ToolContext): Promise<TaskOutcome> {
  const parsed = v.safeParse(PostgresTaskSchema, task);
  if (!parsed.success) return invalidTask('postgres', parsed.issues);
  const { command, params, timeout_seconds: timeoutSeconds, read_only: readOnly = false } = parsed.output;
  // The server stops the statement itself at the task's deadline, even if the worker dies (at most
  // the worker's own timer, which is also the most statement_timeout takes).
  const taskTimeoutMs = typeof timeoutSeconds === 'number' && timeoutSeconds > 0 ? Math.min(Math.ceil(timeoutSeconds * 1000), MAX_TIMER_MS) : undefined;
  // As the reader role, never past the role's own bound: the connection's setting replaces the
  // role's, and a statement held for hours what it locks (the migrations' advisory lock, a table
  // a migration alters), every role's to take, for as long as the playbook's author wrote.
  const asReader = readOnly && !ctx.credential;
  const statementTimeoutMs = asReader ? Math.min(taskTimeoutMs ?? READER_STATEMENT_TIMEOUT_MS, READER_STATEMENT_TIMEOUT_MS) : taskTimeoutMs;

  // read_only without auth: the reader role only, never the service's own user (a superuser, often).
  const serviceUrl = readOnly ? ctx.serviceReaderUrl : ctx.serviceDatabaseUrl;
  if (!ctx.credential && !serviceUrl) {
    return fail(
      'no_connection',
      readOnly
        ? 'a read_only postgres task without auth needs a worker that can read the service database as its reader role (the in-process workers of `svc start`, or `svc worker` with SVC_ALLOW_SERVICE_DB_TASKS=read_only and SVC_DATABASE_URL); it never runs as the service user'
        : "a postgres task without auth needs a credential (auth: NAME), or read_only: true to read the service database as its reader role; one that is neither runs only on a worker with SVC_ALLOW_SERVICE_DB_TASKS=true, as the service database's own user",
    );
  }
  const sessionOptions = readOnly ? READ_ONLY_SESSION_OPTIONS : SESSION_OPTIONS;
  const first = postgresConnection(ctx.credential, serviceUrl, statementTimeoutMs);
  if (!first.ok) return fail(first.code, first.message);
  let connection = first;
  const secrets = [...first.secrets];
  ctx.secrets?.add(...first.secrets);
  withSessionOptions(connection.config, sessionOptions);
  if (ctx.signal.aborted) return aborted(ctx.signal);
  const safe = (text: string) => redactSecrets(text, secrets);
  // As the reader role of a `svc worker`, whose login the server may have changed since (below).
  const renewReader = asReader ? ctx.renewServiceReaderUrl : undefined;

  // Values as PostgreSQL has them (exact bigints, bytea, dates), whatever parsers the process set globally.
  const newClient = (config: pg.ClientConfig): pg.Client => {
    const made = new pg.Client({ ...config, types: postgresValueTypes });
    // A backend that goes away between queries emits 'error' on the client; the query reports it.
    made.on('error', () => {});
    return made;
  };
  let client = newClient(connection.config);
  let connected = false;
  let tooLarge = false;

  const work = (async (): Promise<TaskOutcome> => {
    try {
      await client.connect();
    } catch (error) {
      if (!renewReader || !loginRefused(error)) return fail('connection', safe(`cannot connect to ${connection.target}: ${errorText(error)}`));
      // The reader's password is derived from the server's encryption key: after a rotation the
      // server sets the new one, and the login this worker kept is refused. Ask for it again, once.
      const renewedUrl = await renewReader();
      const renewed = renewedUrl === undefined ? undefined : postgresConnection(undefined, renewedUrl, statementTimeoutMs);
      if (!renewed?.ok) return fail('connection', safe(`cannot connect to ${connection.target}: ${errorText(error)}`));
      secrets.push(...renewed.secrets);
      ctx.secrets?.add(...renewed.secrets);
      withSessionOptions(renewed.config, sessionOptions);
      connection = renewed;
      void client.end().catch(() => {});
      client = newClient(connection.config);
      if (ctx.signal.aborted) return aborted(ctx.signal);
      try {
        await client.connect();
      } catch (again) {
        return fail('connection', safe(`cannot connect to ${connection.target}: ${errorText(again)}`));
      }
    }
    connected = true;
    // When the statement started: a 57014 is the statement_timeout only once that long has passed
    // (a cancel from another session, a COPY FROM STDIN with no stream, share the code).
    let startedAt = performance.now();
    try {
      // Extended protocol for read_only: one statement, so none can end the read-only transaction
      // and write in the next (`SET default_transaction_read_only = off; COMMIT; DELETE …`). Its
      // transaction is rolled back, never committed: a large object, a NOTIFY, a transaction's
      // advisory lock (functions PostgreSQL grants to every role) go with it.
      const query: pg.QueryConfig & { queryMode?: 'extended' } = { text: command, values: params ?? undefined, ...(readOnly ? { queryMode: 'extended' } : {}) };
      if (readOnly) await client.query('BEGIN READ ONLY');
      startedAt = performance.now();
      const raw: unknown = await boundedQuery(client, query, ANSWER_MAX_BYTES, () => {
        tooLarge = true;
        if (connected) void cancelBackend(client, connection.config);
      });
      if (readOnly) await client.query('ROLLBACK');
      // The cancel came after the statement had ended (a write's RETURNING rows come once it has run).
      if (tooLarge) return fail('response_too_large', `the statement ran (what it changed stands), but its rows came to over ${ANSWER_MAX_TEXT}, the most a task's report carries: they are not returned`);
      const result = v.safeParse(QueryResultSchema, Array.isArray(raw) ? raw.at(-1) : raw);
      if (!result.success) return fail('internal', 'the database answered an unexpected result');
      const data: PostgresData = { rows: result.output.rows, row_count: result.output.rowCount, command: result.output.command };
      return ok(data);
    } catch (error) {
      const dbError = v.safeParse(DatabaseErrorSchema, error);
      if (!dbError.success) return fail('sql_error', safe(errorText(error)));
      const { message, code: sqlstate } = dbError.output;
      if (tooLarge) return fail('response_too_large', `the statement's rows came to over ${ANSWER_MAX_TEXT}, the most a task's report carries: it was cancelled`);
      if (sqlstate === SQLSTATE_QUERY_CANCELED && statementTimeoutMs && performance.now() - startedAt >= statementTimeoutMs) {
        const bound = asReader && statementTimeoutMs === READER_STATEMENT_TIMEOUT_MS ? ` (the service database's reader role runs a statement for at most ${READER_STATEMENT_TIMEOUT_MS / 1000} s)` : '';
        return fail('timeout', safe(`${message}${bound}`), { sqlstate });
      }
      return fail('sql_error', safe(sqlstate ? `${message} (SQLSTATE ${sqlstate})` : message), { sqlstate: sqlstate ?? null });
    }
  })();

  let onAbort = () => {};
  const abortedFirst = new Promise<undefined>((resolve) => {
    onAbort = () => {
      // The running statement is cancelled on the server, not merely abandoned with its connection.
      if (connected) void cancelBackend(client, connection.config);
      resolve(undefined);
    };
  });
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const outcome = await Promise.race([work, abortedFirst]);
    return outcome ?? aborted(ctx.signal);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    // Not awaited after an abort: ending waits for the server, and the task must return now.
    const ended = client.end().catch(() => {});
    if (!ctx.signal.aborted) await ended;
  }
}

/**
 * Sets the session's `options` last, after any a connection string brings (pg lets the string's
 * replace the config's): for a setting given twice, the last `-c` is the one that holds.
 */
function withSessionOptions(config: pg.ClientConfig, options: string): void {
  if (config.connectionString) {
    let url: URL | undefined;
    try {
      url = new URL(config.connectionString);
    } catch {
      url = undefined; // a form URL cannot read (pg's own parser takes it): it brings no options of its own here
    }
    const theirs = url?.searchParams.get('options');
    if (url && theirs) {
      url.searchParams.set('options', `${theirs} ${options}`);
      config.connectionString = url.toString();
      return;
    }
  }
  config.options = options;
}

async function cancelBackend(client: pg.Client, config: pg.ClientConfig): Promise<void> {
  // pg keeps the backend pid at runtime without declaring it in its types; validate, then use it.
  const backend = v.safeParse(BackendSchema, client);
  if (!backend.success) return;
  const canceller = new pg.Client({ ...config, statement_timeout: PG_CANCEL_TIMEOUT_MS, connectionTimeoutMillis: PG_CANCEL_TIMEOUT_MS });
  canceller.on('error', () => {});
  try {
    await canceller.connect();
    await canceller.query('SELECT pg_cancel_backend($1)', [backend.output.processID]);
  } catch {
    // Best effort: the statement_timeout, or the connection's end, stops it otherwise.
  } finally {
    await canceller.end().catch(() => {});
  }
}

/** PostgreSQL refused the login: a wrong password (28P01), or a role that may not log in (28000). */
function loginRefused(error: unknown): boolean {
  const parsed = v.safeParse(DatabaseErrorSchema, error);
  return parsed.success && (parsed.output.code === '28P01' || parsed.output.code === '28000');
}

function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(errorText).join('; ');
  return error instanceof Error ? error.message || error.name : String(error);
}
