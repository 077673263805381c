import * as v from 'valibot';
import { actualTypeName } from '../crypto/validate-against-schema.ts';
import { isObject } from '../objects.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { natsLoginProblems } from './nats-login-problems.ts';

// One registry of credential types: per type the fields the tools read (src/credential/
// postgres-connection.ts, src/worker/tools/credential-auth.ts, oauth2-token.ts), which are secret,
// which must be there, and the valibot schema that checks a credential's data on create and update.
// The API (GET /api/credential-types), the console's form and docs/credentials.md read it.

/** The spec's credential types (`snowflake` is its data-warehouse type). */
export const CREDENTIAL_TYPES = ['postgres', 'oauth2', 'bearer', 'basic', 'api_key', 'service_account', 'custom', 'nats', 'clickhouse', 'snowflake'] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/** Whether `type` is one of the spec's credential types. */
export const isCredentialType = (type: string): type is CredentialType => (CREDENTIAL_TYPES as readonly string[]).includes(type);

/** How a field's value is checked: `port` is an integer 1-65535 or its digits as text; `strings` a string or an array of them. */
export type FieldKind = 'string' | 'url' | 'integer' | 'port' | 'boolean' | 'object' | 'strings';

export type CredentialField = {
  name: string;
  kind: FieldKind;
  description: string;
  /** Masked in forms, never shown again, masked in what tasks report. */
  secret: boolean;
  /** Its value has line breaks that matter (a PEM key, a .creds file): the form gives it a textarea, not a one-line input. */
  multiline?: boolean;
  /** Another accepted name of the field `aliasOf` (read when that one is absent); not shown in forms. */
  aliasOf?: string;
  /** The values allowed. */
  choices?: readonly string[];
};

/** How POST /api/credentials/{name}/test probes a credential of the type; null: it has no test. */
export type CredentialTest = 'postgres' | 'http' | 'nats' | null;

export type CredentialTypeSpec = {
  type: CredentialType;
  description: string;
  fields: readonly CredentialField[];
  /** Each group needs one of its fields present and non-empty; the first is the one named in errors. */
  required: readonly (readonly string[])[];
  /** Fields outside `fields` are allowed (custom, service-account JSON). */
  open: boolean;
  test: CredentialTest;
  /** Example data (no real secret), for docs and the form's placeholders. */
  example: Record<string, unknown>;
  /** Checks data with the spec's error strings as issue messages (see credentialDataErrors). */
  schema: v.GenericSchema<unknown, Record<string, unknown>>;
};

type Spec = Omit<CredentialTypeSpec, 'schema'> & { check?: (data: Record<string, unknown>) => string[] };

const f = (name: string, kind: FieldKind, description: string, secret = false, extra: Partial<CredentialField> = {}): CredentialField => ({
  name,
  kind,
  description,
  secret,
  ...extra,
});
const alias = (name: string, of: string, kind: FieldKind, secret = false): CredentialField => f(name, kind, `same as \`${of}\``, secret, { aliasOf: of });

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

const SPECS: readonly Spec[] = [
  {
    type: 'postgres',
    description: 'A PostgreSQL login: host fields, or one connection string. Used by `postgres` tasks and POST /api/postgres/execute.',
    fields: [
      f('host', 'string', 'server host name or address'),
      f('port', 'port', 'server port (default 5432)'),
      f('user', 'string', 'role to log in as'),
      f('password', 'string', 'password of the role', true),
      f('database', 'string', 'database name'),
      f('sslmode', 'string', 'libpq SSL mode: require encrypts, verify-ca/verify-full also check the certificate', false, { choices: SSL_MODES }),
      f('ssl', 'boolean', 'TLS on or off (sslmode wins when both are set)'),
      f('connection_string', 'string', 'postgres://user:password@host:port/database, instead of the fields above', true),
      alias('url', 'connection_string', 'string', true),
      alias('dsn', 'connection_string', 'string', true),
      alias('db_host', 'host', 'string'),
      alias('db_port', 'port', 'port'),
      alias('username', 'user', 'string'),
      alias('db_user', 'user', 'string'),
      alias('db_password', 'password', 'string', true),
      alias('dbname', 'database', 'string'),
      alias('db_name', 'database', 'string'),
      alias('db_database', 'database', 'string'),
    ],
    required: [['host', 'db_host', 'connection_string', 'url', 'dsn']],
    open: false,
    test: 'postgres',
    example: { host: 'db.internal', port: 5432, user: 'app', password: '…', database: 'app' },
  },
  {
    type: 'oauth2',
    description: 'OAuth 2.0 client credentials: the worker fetches a token from token_url and sends it as a bearer token (cached until it expires). A credential with only access_token is used as is.',
    fields: [
      f('token_url', 'url', 'token endpoint (client-credentials grant)'),
      f('client_id', 'string', 'client id'),
      f('client_secret', 'string', 'client secret', true),
      f('scope', 'strings', 'scopes: space-separated text or a list'),
      f('audience', 'string', 'audience parameter, for providers that need one'),
      f('access_token', 'string', 'a ready token, used when there is no token_url', true),
    ],
    required: [],
    open: false,
    test: null,
    example: { token_url: 'https://idp.example/oauth/token', client_id: 'svc', client_secret: '…', scope: 'read' },
    check: (data) =>
      present(data, 'access_token') && data.token_url === undefined
        ? []
        : ['token_url', 'client_id', 'client_secret'].filter((name) => !present(data, name)).map((name) => `Missing required field: ${name}`),
  },
  {
    type: 'bearer',
    description: 'A token sent as `Authorization: Bearer <token>`.',
    fields: [f('token', 'string', 'the token', true), alias('access_token', 'token', 'string', true)],
    required: [['token', 'access_token']],
    open: false,
    test: 'http',
    example: { token: '…' },
  },
  {
    type: 'basic',
    description: 'HTTP Basic authentication: `Authorization: Basic base64(username:password)`.',
    fields: [f('username', 'string', 'user name'), f('password', 'string', 'password (may be empty)', true), alias('user', 'username', 'string')],
    required: [['username', 'user']],
    open: false,
    test: 'http',
    example: { username: 'alice', password: '…' },
  },
  {
    type: 'api_key',
    description: 'A key sent in a header (default X-API-Key) or a query parameter (default api_key).',
    fields: [
      f('key', 'string', 'the key', true),
      f('in', 'string', 'where it goes: header (default) or query', false, { choices: ['header', 'query'] }),
      f('header', 'string', 'header name when in is header (default X-API-Key)'),
      f('param', 'string', 'query parameter name when in is query (default api_key)'),
      alias('api_key', 'key', 'string', true),
      alias('value', 'key', 'string', true),
    ],
    required: [['key', 'api_key', 'value']],
    open: false,
    test: 'http',
    example: { key: '…', in: 'header', header: 'X-API-Key' },
  },
  {
    type: 'service_account',
    description: "A service-account JSON key file's fields, as the provider issued it (other fields of the file are kept).",
    fields: [
      f('type', 'string', 'service_account'),
      f('project_id', 'string', 'project id'),
      f('private_key_id', 'string', 'id of the key', true),
      f('private_key', 'string', 'PEM private key', true, { multiline: true }),
      f('client_email', 'string', "the account's e-mail address"),
      f('client_id', 'string', 'numeric client id'),
      f('token_uri', 'url', 'token endpoint'),
    ],
    required: [['client_email'], ['private_key']],
    open: true,
    test: null,
    example: { type: 'service_account', project_id: 'p', client_email: 'svc@p.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----…' },
  },
  {
    type: 'custom',
    description: 'Free data (a schema of its own may constrain it). For http tasks: `headers` (and `query`) objects of strings are sent as they are.',
    fields: [f('headers', 'object', 'headers an http task sends, name → value', true), f('query', 'object', 'query parameters an http task adds, name → value', true)],
    required: [],
    open: true,
    test: 'http',
    example: { headers: { 'X-Signature': '…' } },
  },
  {
    type: 'nats',
    description: 'A NATS server login: url (or servers), with one of: a user and password, a token, a .creds file (user JWT and NKEY seed) or an NKEY user seed.',
    fields: [
      f('url', 'url', 'nats://host:4222 (tls:// for TLS; nats://TOKEN@host carries a token, nats://user:password@host a login)', true),
      f('token', 'string', 'authentication token', true),
      f('user', 'string', 'user name'),
      f('password', 'string', 'password', true),
      f('creds', 'string', 'the text of a .creds file (as nsc writes it): the user JWT and its NKEY seed', true, { multiline: true }),
      f('nkey', 'string', 'an NKEY user seed (SU…), for a server that lists the user by its public key', true),
      // DESIGN.md's name for it; a list (or comma-separated text) of URLs, of which the first is used.
      alias('servers', 'url', 'strings', true),
    ],
    required: [['url', 'servers']],
    open: false,
    test: 'nats',
    example: { url: 'nats://nats.internal:4222', user: 'app', password: '…' },
    check: (data) => {
      const problems = natsLoginProblems(data);
      const servers = typeof data.servers === 'string' ? data.servers.split(',') : data.servers;
      if (!Array.isArray(servers) || !servers.every((s) => typeof s === 'string')) return problems;
      return servers.every((s) => URL.canParse(s.trim())) ? problems : ["Field 'servers' must be a URL or a list of URLs", ...problems];
    },
  },
  {
    type: 'clickhouse',
    description: 'A ClickHouse login (HTTP interface).',
    fields: [
      f('host', 'string', 'server host'),
      f('port', 'port', 'HTTP port (8123, 8443 with TLS)'),
      f('user', 'string', 'user name (default: default)'),
      f('password', 'string', 'password', true),
      f('database', 'string', 'database'),
      f('secure', 'boolean', 'use HTTPS'),
      f('url', 'url', 'http(s)://host:port, instead of host, port and secure'),
      alias('username', 'user', 'string'),
    ],
    required: [['host', 'url']],
    open: false,
    test: null,
    example: { host: 'ch.internal', port: 8123, user: 'default', password: '…', database: 'default' },
  },
  {
    type: 'snowflake',
    description: 'The data-warehouse login (Snowflake): account, user, password (or a key pair), warehouse, database.',
    fields: [
      f('account', 'string', 'account identifier (orgname-account)'),
      f('user', 'string', 'user name'),
      f('password', 'string', 'password', true),
      f('private_key', 'string', 'PEM private key, for key-pair authentication instead of a password', true, { multiline: true }),
      f('warehouse', 'string', 'warehouse'),
      f('database', 'string', 'database'),
      f('schema', 'string', 'schema'),
      f('role', 'string', 'role'),
    ],
    required: [['account'], ['user'], ['password', 'private_key']],
    open: false,
    test: null,
    example: { account: 'myorg-acct', user: 'app', password: '…', warehouse: 'COMPUTE_WH', database: 'ANALYTICS' },
  },
];

// An empty text or list counts as absent: it names nothing.
const present = (data: Record<string, unknown>, name: string): boolean => {
  const value = data[name];
  return Object.hasOwn(data, name) && value !== '' && value !== null && !(Array.isArray(value) && value.length === 0);
};

/** The spec-style error of one field's value, or null; never quotes the value (it may be a secret). */
function fieldError(field: CredentialField, value: unknown): string | null {
  const got = actualTypeName(value);
  const must = (what: string) => `Field '${field.name}' must be ${what}, got ${got}`;
  switch (field.kind) {
    case 'string':
      if (typeof value !== 'string') return must('string');
      if (field.choices && !field.choices.includes(value)) return `Field '${field.name}' must be one of: ${field.choices.join(', ')}`;
      return null;
    case 'url':
      if (typeof value !== 'string') return must('string');
      return URL.canParse(value) ? null : `Field '${field.name}' must be a URL`;
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? null : must('integer');
    case 'port': {
      const port = typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : value;
      if (typeof port !== 'number' || !Number.isInteger(port)) return must('integer');
      return port >= 1 && port <= 65535 ? null : `Field '${field.name}' must be from 1 to 65535`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : must('boolean');
    case 'object':
      return isObject(value) ? null : must('object');
    case 'strings':
      return typeof value === 'string' || (Array.isArray(value) && value.every((s) => typeof s === 'string')) ? null : must('string or array of strings');
  }
}

/** The spec's error strings for `data` under `spec`: required groups, field types, then unexpected fields. */
function errorsOf(spec: Spec, data: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const group of spec.required) {
    if (group.some((name) => present(data, name))) continue;
    errors.push(`Missing required field: ${group[0]}${group.length > 1 ? ` (or one of ${group.slice(1).join(', ')})` : ''}`);
  }
  if (spec.check) errors.push(...spec.check(data));
  const known = new Map(spec.fields.map((field) => [field.name, field]));
  for (const [name, value] of Object.entries(data)) {
    const field = known.get(name);
    if (!field) continue;
    const error = fieldError(field, value);
    if (error) errors.push(error);
  }
  if (!spec.open) {
    const unexpected = Object.keys(data).filter((name) => !known.has(name));
    if (unexpected.length > 0) errors.push(`Unexpected fields: ${unexpected.join(', ')}`);
  }
  return errors;
}

function withSchema(spec: Spec): CredentialTypeSpec {
  const { check: _check, ...rest } = spec;
  const schema = v.pipe(
    ownKeysRecord(v.string(), v.unknown(), 'data must be a JSON object'),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      for (const message of errorsOf(spec, dataset.value)) addIssue({ message });
    }),
  );
  return { ...rest, schema };
}

/** Every credential type with its fields, requirements and schema, in the spec's order. */
export const CREDENTIAL_TYPE_SPECS: readonly CredentialTypeSpec[] = SPECS.map(withSchema);
const BY_TYPE = new Map(CREDENTIAL_TYPE_SPECS.map((spec) => [spec.type, spec]));

/** The registry entry of a credential type. */
export function credentialTypeSpec(type: CredentialType): CredentialTypeSpec {
  const spec = BY_TYPE.get(type);
  if (!spec) throw new Error(`credential type ${type} has no registry entry`);
  return spec;
}

/**
 * The spec's error strings (`Missing required field: <f>`, `Field '<f>' must be <type>, got <actual>`,
 * `Unexpected fields: <list>`) for `data` as a credential of `type`; empty when it is valid.
 */
export function credentialDataErrors(type: CredentialType, data: Record<string, unknown>): string[] {
  const result = v.safeParse(credentialTypeSpec(type).schema, data);
  return result.success ? [] : result.issues.map((issue) => issue.message);
}
