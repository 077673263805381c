import type { ClientConfig } from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import * as v from 'valibot';
import { credentialSecrets, urlSecrets } from './redact-secrets.ts';
import type { TaskOutcomeCode } from '../../machines/error-codes.ts';
import type { ResolvedCredential } from '../protocol.ts';

// A target that does not answer within this is reported as a connection error.
const PG_CONNECT_TIMEOUT_MS = 10_000;
const PG_APPLICATION_NAME = 'svc-worker';
// pg fills a connection given no password from the process's ~/.pgpass (or PGPASSFILE): a
// credential without one would send the worker's password for that host to it. A password
// function is pg's public way to say "this one, and no other": it answers the empty password.
const NO_PASSWORD = (): string => '';

const Text = v.pipe(v.string(), v.nonEmpty());
const Port = v.union([
  v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
  v.pipe(v.string(), v.regex(/^\d{1,5}$/), v.transform(Number)),
]);
// Credentials are seen with plain and db_-prefixed names; either set is read.
const PostgresCredentialSchema = v.looseObject({
  connection_string: v.optional(Text),
  url: v.optional(Text),
  dsn: v.optional(Text),
  host: v.optional(Text),
  db_host: v.optional(Text),
  port: v.optional(Port),
  db_port: v.optional(Port),
  user: v.optional(Text),
  username: v.optional(Text),
  db_user: v.optional(Text),
  password: v.optional(v.string()),
  db_password: v.optional(v.string()),
  database: v.optional(Text),
  dbname: v.optional(Text),
  db_name: v.optional(Text),
  db_database: v.optional(Text),
  sslmode: v.optional(v.picklist(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'])),
  ssl: v.optional(v.boolean()),
});

export type PostgresConnection =
  | { ok: true; config: ClientConfig; secrets: string[]; target: string }
  | { ok: false; code: TaskOutcomeCode; message: string };

/**
 * The pg client configuration of a postgres task: from the credential (fields or a connection
 * string), else the service database when allowed. `secrets` lists what error messages must not
 * show; `target` names the database for messages without any secret.
 */
export function postgresConnection(credential: ResolvedCredential | undefined, serviceDatabaseUrl: string | undefined, statementTimeoutMs?: number): PostgresConnection {
  const common: ClientConfig = {
    application_name: PG_APPLICATION_NAME,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
  };
  if (!credential) {
    if (!serviceDatabaseUrl) return { ok: false, code: 'no_connection', message: 'postgres task needs an auth credential' };
    return { ok: true, config: { ...common, connectionString: serviceDatabaseUrl }, secrets: [serviceDatabaseUrl, ...urlSecrets(serviceDatabaseUrl)], target: 'the service database' };
  }

  const parsed = v.safeParse(PostgresCredentialSchema, credential.data);
  if (!parsed.success) {
    const fields = parsed.issues.map((issue) => v.getDotPath(issue) ?? '?').join(', ');
    return { ok: false, code: 'invalid_credential', message: `postgres credential '${credential.name}' has invalid fields: ${fields}` };
  }
  const d = parsed.output;
  const secrets = credentialSecrets(credential);
  const target = `credential '${credential.name}'`;
  const connectionString = d.connection_string ?? d.url ?? d.dsn;
  if (connectionString) {
    const secretsOf = [...secrets, connectionString, ...urlSecrets(connectionString)];
    // Taken apart as pg itself would (its values over the common ones), so the password is known.
    let fromUrl: ClientConfig;
    try {
      fromUrl = parseIntoClientConfig(connectionString);
    } catch {
      return { ok: false, code: 'invalid_credential', message: `postgres credential '${credential.name}' has a connection string that is not a postgres URL` };
    }
    return { ok: true, config: { ...common, ...fromUrl, password: fromUrl.password || NO_PASSWORD }, secrets: secretsOf, target };
  }

  const host = d.host ?? d.db_host;
  if (!host) return { ok: false, code: 'invalid_credential', message: `postgres credential '${credential.name}' has neither host nor connection_string` };
  const config: ClientConfig = {
    ...common,
    host,
    port: d.port ?? d.db_port,
    user: d.user ?? d.username ?? d.db_user,
    password: (d.password ?? d.db_password) || NO_PASSWORD,
    database: d.database ?? d.dbname ?? d.db_name ?? d.db_database,
  };
  if (d.ssl !== undefined) config.ssl = d.ssl;
  // libpq's modes: require encrypts without checking the certificate, verify-* check it.
  if (d.sslmode === 'require') config.ssl = { rejectUnauthorized: false };
  else if (d.sslmode === 'verify-ca' || d.sslmode === 'verify-full') config.ssl = true;
  else if (d.sslmode === 'disable') config.ssl = false;
  return { ok: true, config, secrets, target };
}
