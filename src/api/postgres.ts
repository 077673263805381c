import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { getCredentialByName } from '../db/credential.repo.ts';
import { runAsServiceReader, runStatement, serviceReaderLogin, SqlExecutionError, SQL_STATEMENT_TIMEOUT_MS } from '../db/sql-execute.ts';
import { ServiceError, notFound } from '../errors.ts';
import { postgresConnection } from '../credential/postgres-connection.ts';
import { redactSecrets, urlSecrets } from '../credential/redact-secrets.ts';
import { openCredentialData } from './credentials.ts';
import { MAX_CREDENTIAL_REFERENCE_CHARS as MAX_CREDENTIAL_NAME_CHARS } from '../dsl/credential-reference.ts';
import { claimHeadersSchema, requireWorkerGrant } from './worker-grant.ts';
import { anyObject, responses } from './answers.ts';
import { exactObject, jsonSchema } from './validation.ts';

const MS_PER_SECOND = 1000;
const MAX_TIMEOUT_SECONDS = SQL_STATEMENT_TIMEOUT_MS / MS_PER_SECOND;
// PostgreSQL identifiers are at most 63 bytes; quoting is still applied when it is set.
const IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

// Exact: a misspelt credential_name would run the query as the service's own reader instead.
// The optional fields take null as none (a client's optional field left unset).
const executeBody = exactObject({
  query: v.pipe(v.string(), v.minLength(1, 'query is empty'), v.description('one SQL statement')),
  schema: v.optional(v.nullable(v.pipe(v.string(), v.regex(IDENTIFIER_RE, 'must be a plain SQL identifier (letters, digits, _, $)')))),
  // No credential has a longer name: a longer one is refused naming the field, not a 404 echoing it.
  credential_name: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_CREDENTIAL_NAME_CHARS, `must be at most ${MAX_CREDENTIAL_NAME_CHARS} characters (a credential name's limit)`)))),
  timeout_seconds: v.optional(
    v.nullable(v.pipe(v.number(), v.minValue(0.001), v.maxValue(MAX_TIMEOUT_SECONDS), v.description(`statement timeout, at most ${MAX_TIMEOUT_SECONDS} (the default)`))),
  ),
});

const readerAnswer = v.object({ user: v.string(), password: v.string() });
const executeAnswer = v.object({ status: v.literal('ok'), result: v.pipe(v.array(anyObject), v.description('the rows, each an object by column name')) });

/**
 * Password of the service database's reader role: HMAC of the current key, so every server
 * sharing the key agrees on it without storing it anywhere.
 */
export function readerPassword(keyring: Keyring): string {
  const key = keyring.keyFor(keyring.currentKid);
  if (!key) throw new Error('current encryption key missing from keyring');
  return createHmac('sha256', key).update('svc sql reader login v1').digest('base64url');
}


/**
 * GET /api/worker/service-reader: the reader role's user name and password, for a `svc worker`
 * (SVC_ALLOW_SERVICE_DB_TASKS) that runs a `read_only` postgres task without `auth`. Answered
 * only to the worker token, and only for a held command (CLAIM_HEADERS) with such a task:
 * like a credential, the login goes only where a task needs it (requireWorkerGrant).
 */
async function serviceReaderRoute(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/worker/service-reader',
    {
      schema: { tags: ['workers'], summary: 'The service database reader role login, for a held command with a read_only postgres task without auth', headers: claimHeadersSchema(), response: responses({ 200: readerAnswer }) },
      config: { access: { level: 'worker' } },
    },
    async (req, reply) => {
      await requireWorkerGrant(req, deps, { kind: 'service_reader' });
      try {
        const login = await serviceReaderLogin(deps.db, readerPassword(deps.keyring));
        reply.header('cache-control', 'no-store');
        return login;
      } catch (err) {
        if (!(err instanceof SqlExecutionError)) throw err;
        req.log.warn({ sqlstate: err.sqlstate }, 'service reader login unavailable');
        throw new ServiceError('bad_request', err.message);
      }
    },
  );
}

/** POST /api/postgres/execute: one statement on a credential's database, or on the service database as its reader role. */
export async function postgresRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await serviceReaderRoute(app, deps);
  app.post(
    '/api/postgres/execute',
    {
      schema: {
        tags: ['postgres'],
        summary: 'Run one SQL statement (credential_name: that postgres credential; else the service database, read-only role)',
        body: jsonSchema(executeBody),
        response: responses({ 200: executeAnswer }),
      },
      config: { access: { level: 'admin' } },
    },
    async (req) => {
      const body = req.body as v.InferOutput<typeof executeBody>;
      const opts = { schema: body.schema ?? undefined, timeoutMs: (body.timeout_seconds ?? MAX_TIMEOUT_SECONDS) * MS_PER_SECOND };
      let secrets: string[];
      let run: () => Promise<Record<string, unknown>[]>;
      if (body.credential_name !== undefined && body.credential_name !== null) {
        const row = await getCredentialByName(deps.db, body.credential_name);
        if (!row) throw notFound(`credential '${body.credential_name}'`);
        if (row.type !== 'postgres') {
          throw new ServiceError('bad_request', `credential '${row.name}' has type '${row.type}'; SQL execution needs a postgres credential`);
        }
        const data = openCredentialData(deps.keyring, row, req.log);
        const connection = postgresConnection({ name: row.name, type: row.type, data }, undefined);
        if (!connection.ok) throw new ServiceError('bad_request', connection.message);
        secrets = connection.secrets;
        run = () => runStatement(connection.config, body.query, opts);
      } else {
        const password = readerPassword(deps.keyring);
        secrets = [password, deps.db.url, ...urlSecrets(deps.db.url)];
        run = () => runAsServiceReader(deps.db, password, body.query, opts);
      }
      try {
        return { status: 'ok', result: await run() };
      } catch (err) {
        if (!(err instanceof SqlExecutionError)) throw err;
        // The statement text is never logged: it may carry secrets (CREATE USER … PASSWORD …).
        req.log.info({ phase: err.phase, sqlstate: err.sqlstate, credential: body.credential_name }, 'sql execute failed');
        throw new ServiceError('bad_request', redactSecrets(err.message, secrets));
      }
    },
  );
}
