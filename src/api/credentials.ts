import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { openCredential } from '../crypto/open-credential.ts';
import { credentialAad, seal } from '../crypto/seal.ts';
import { credentialSchemaSchema, validateAgainstSchema } from '../crypto/validate-against-schema.ts';
import { CREDENTIAL_TYPE_SPECS, CREDENTIAL_TYPES, credentialDataErrors, isCredentialType } from '../credential/credential-types.ts';
import type { Queryable } from '../db/queryable.ts';
import {
  deleteCredential,
  getCredentialById,
  getCredentialByName,
  insertCredential,
  listCredentials,
  lockCredentialName,
  updateCredential,
  type CredentialRow,
} from '../db/credential.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import type { RouteAccess } from './access.ts';
import { requireAccess } from './auth.ts';
import { claimHeadersSchema, requireWorkerGrant } from './worker-grant.ts';
import { exactObject, jsonSchema, oneOf, unknownFieldMessage } from './validation.ts';
import { emptyQueryValuesAbsent } from './empty-query-values.ts';
import { isObject } from '../objects.ts';
import { testCredential } from './credential-test.ts';
import { anyObject, integer, responses, time, withAnswerHeaders } from './answers.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { holdsUserinfo } from '../url-userinfo.ts';
import { CREDENTIAL_REFERENCE, MAX_CREDENTIAL_REFERENCE_CHARS as MAX_CREDENTIAL_NAME_CHARS } from '../dsl/credential-reference.ts';

// Decrypted credential data: admins, and workers resolving a task's `auth` (worker-grant.ts narrows them).
const CREDENTIAL_DATA_ACCESS: RouteAccess = { level: 'admin', worker: true };

// Names appear in URL paths and are told apart from ids by not being all digits; the rule and the
// longest name (a route's name or id parameter beyond it names nothing: 422, not 404) are the ones
// a playbook's `auth` is checked by.
const maxNameLength = v.maxLength<string, typeof MAX_CREDENTIAL_NAME_CHARS, string>(MAX_CREDENTIAL_NAME_CHARS, `must be at most ${MAX_CREDENTIAL_NAME_CHARS} characters (a credential name's limit)`);
const credentialName = v.pipe(
  v.string(),
  v.minLength(1),
  maxNameLength,
  v.regex(CREDENTIAL_REFERENCE, 'must be letters, digits, _ . -'),
  v.check((name) => !/^\d+$/.test(name), 'must not be only digits (an all-digit identifier names an id)'),
);
// Custom messages: valibot's default ones quote the received value, which here may be a secret.
// The object test comes first: record() alone accepts an array and outputs a plain copy of it.
const jsonObject = (message: string) => v.pipe(v.custom<Record<string, unknown>>(isObject, message), ownKeysRecord(v.string(), v.unknown(), message));

/** The most tags a credential carries. */
export const MAX_CREDENTIAL_TAGS = 20;
const credentialType = v.pipe(v.string(), v.minLength(1), v.description(`one of ${CREDENTIAL_TYPES.join(', ')}`));
const credentialSchema = v.optional(
  v.nullable(
    v.pipe(
      jsonObject('schema must be a JSON object'),
      v.description('{fields?: string[], required?: string[], types?: {field: string|integer|boolean|number|array|object}, description?: string}'),
    ),
  ),
);
const metadata = {
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(4000)))),
  // Bounded as an execution's labels are: tags are searched (`q`) and answered with every list, so
  // an unbounded list (400,000 were taken) made each read of the credentials that much larger.
  // null is none, as for description, schema and meta (a client's optional field left unset).
  tags: v.optional(v.nullable(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), v.maxLength(MAX_CREDENTIAL_TAGS, `must hold at most ${MAX_CREDENTIAL_TAGS} tags`)))),
  schema: credentialSchema,
  meta: v.optional(v.nullable(jsonObject('meta must be a JSON object'))),
};
// Exact: a misspelt `schema` would store the credential unchecked.
const storeBody = exactObject({ name: credentialName, type: credentialType, data: jsonObject('data must be a JSON object'), ...metadata });
// PUT replaces the data (type defaults to the stored one); PATCH merges data fields (null removes one).
const putBody = exactObject({ type: v.optional(credentialType), data: jsonObject('data must be a JSON object'), ...metadata });
const patchBody = exactObject({
  type: v.optional(credentialType),
  data: v.optional(v.pipe(jsonObject('data must be a JSON object'), v.description('fields to set; a field set to null is removed'))),
  ...metadata,
});
const testBody = v.optional(
  v.object({
    url: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(4000),
        // Bad input, not a failed test: a 200 {ok: false} would read as the target refusing the login.
        v.check((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), 'must be an http or https URL'),
        // fetch refuses such a URL with an error quoting it, password and all; the credential gives the auth.
        v.check((text) => !holdsUserinfo(text), 'must not hold a user name or password: the credential tested gives the auth'),
        v.description('for bearer, basic, api_key and custom: the http(s) URL to send a GET with the credential\'s auth'),
      ),
    ),
  }),
);
type StoreChange = Omit<v.InferOutput<typeof putBody>, 'type'> & { name: string; type: string };
// Every route at /api/credentials/{name} takes a name or an id; one parameter name, as OpenAPI
// counts paths that differ only in it as one path, which a document must not hold twice.
const nameParams = v.object({ name: v.pipe(v.string(), v.minLength(1), maxNameLength, v.description('the credential\'s name, or its id (all digits)')) });
// A boolean query value as clients write it, in any case: Python's requests sends `True`, and
// FastAPI-style servers take yes/no and on/off too.
const QUERY_BOOLEANS = new Map([...['true', '1', 'yes', 'on'].map((w) => [w, true] as const), ...['false', '0', 'no', 'off'].map((w) => [w, false] as const)]);
// Exact: a misspelt `include_data` answered the metadata alone, as if the data were not asked for.
const getQuery = exactObject({
  include_data: v.optional(
    v.pipe(
      v.string(),
      v.check((s) => QUERY_BOOLEANS.has(s.toLowerCase()), 'must be true or false'),
      v.transform((s) => QUERY_BOOLEANS.get(s.toLowerCase()) === true),
      v.description('true (also 1, yes, on, any case) adds the decrypted data'),
    ),
    'false',
  ),
});
// A type no credential can have (`Bearer`, `postgresql`) is refused naming them, not an empty list.
const listQuery = exactObject({ type: v.optional(oneOf(CREDENTIAL_TYPES)), q: v.optional(v.string()) });

const credentialAnswer = v.object({
  id: v.pipe(v.string(), v.description('the id, as text')),
  name: v.string(),
  type: v.string(),
  description: v.nullable(v.string()),
  tags: v.array(v.string()),
  meta: v.unknown(),
  schema: v.unknown(),
  created_at: time,
  updated_at: time,
});

const readAnswer = v.object({ ...credentialAnswer.entries, data: v.optional(v.pipe(anyObject, v.description('the decrypted data: only with include_data=true'))) });
const listAnswer = v.object({ credentials: v.array(credentialAnswer), count: integer });
const deletedAnswer = v.object({ status: v.literal('success'), message: v.string(), name: v.string() });
const testAnswer = v.object({
  ok: v.boolean(),
  message: v.pipe(v.string(), v.description("what the target answered, the credential's secrets masked")),
  type: v.string(),
  duration_ms: integer,
  status: v.optional(v.pipe(integer, v.description('the HTTP status, for the types tested with a GET'))),
});
// CredentialTypeSpec without its valibot schema: the types' fields, as the console builds its form.
const typesAnswer = v.object({
  types: v.array(
    v.object({
      type: v.picklist(CREDENTIAL_TYPES),
      description: v.string(),
      fields: v.array(v.object({ name: v.string(), kind: v.string(), description: v.string(), secret: v.boolean(), multiline: v.optional(v.boolean()), aliasOf: v.optional(v.string()), choices: v.optional(v.array(v.string())) })),
      required: v.pipe(v.array(v.array(v.string())), v.description('each group needs one of its fields')),
      open: v.pipe(v.boolean(), v.description('fields outside `fields` are allowed')),
      test: v.nullable(v.picklist(['postgres', 'http', 'nats'])),
      example: anyObject,
    }),
  ),
});

/** Metadata of a credential as the API returns it: never the data; id as a string. */
export function presentCredential(row: CredentialRow): v.InferOutput<typeof credentialAnswer> {
  return {
    id: String(row.id),
    name: row.name,
    type: row.type,
    description: row.description,
    tags: row.tags,
    meta: row.meta,
    schema: row.schema,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A credential by id (all digits) or name; ids first, then names for rows written outside this API. */
async function findCredential(q: Queryable, identifier: string): Promise<CredentialRow | undefined> {
  if (/^\d{1,15}$/.test(identifier)) {
    const byId = await getCredentialById(q, Number(identifier));
    if (byId) return byId;
  }
  return getCredentialByName(q, identifier);
}

/**
 * The name of the credential a write route's parameter names: an id (all digits: the API refuses
 * such names) is the name of its row, as GET reads it; otherwise the parameter itself.
 */
async function credentialNameOf(q: Queryable, identifier: string): Promise<string> {
  return (await findCredential(q, identifier))?.name ?? identifier;
}

/** Opens a credential's data; one that no configured key opens is a 409 and a log line without data. */
export function openCredentialData(keyring: Keyring, row: CredentialRow, log: FastifyBaseLogger): Record<string, unknown> {
  const opened = openCredential(keyring, row.name, row.data_encrypted);
  if ('data' in opened) return opened.data;
  log.warn({ credential: row.name, problem: opened.problem }, 'credential data cannot be opened');
  throw new ServiceError('conflict', opened.problem);
}

// The longest type text an answer echoes: the refusal of a 200,000-character type quoted it whole.
const MAX_ECHOED_TYPE_CHARS = 64;

const unknownType = (type: string): ServiceError =>
  new ServiceError(
    'unknown_credential_type',
    `unknown credential type '${type.length > MAX_ECHOED_TYPE_CHARS ? `${type.slice(0, MAX_ECHOED_TYPE_CHARS)}…' (${type.length} characters)` : `${type}'`}; allowed types: ${CREDENTIAL_TYPES.join(', ')}`,
  );

/**
 * A sent schema's fields the format does not have, as `Invalid schema:` errors: the format reads
 * only its own, so `requird: [token]` was stored and required nothing. Only a schema being sent
 * is held to it (one stored before is read as it always was). A keychain entry's schema is the
 * same format (src/api/keychain.ts).
 */
export function unknownSchemaFields(schema: Record<string, unknown> | null | undefined): string[] {
  const known = Object.keys(credentialSchemaSchema.entries);
  return Object.keys(schema ?? {})
    .filter((name) => !known.includes(name))
    .map((name) => `Invalid schema: ${name}: ${unknownFieldMessage(name, known)}`);
}

/**
 * Checks `change.data` against its type's built-in schema and the credential's own schema (400 with
 * the spec's strings, nothing written), seals it and inserts or replaces the row. Omitted optional
 * fields keep their stored value. The caller holds the name lock and passes the stored row, if any.
 */
async function writeCredential(q: Queryable, keyring: Keyring, change: StoreChange, existing: CredentialRow | undefined): Promise<CredentialRow> {
  if (!isCredentialType(change.type)) throw unknownType(change.type);
  // An update without a schema is still checked against the stored one.
  const schema = change.schema === undefined ? (existing?.schema ?? null) : change.schema;
  const errors = [...new Set([...unknownSchemaFields(change.schema), ...credentialDataErrors(change.type, change.data), ...validateAgainstSchema(change.data, schema)])];
  if (errors.length > 0) throw new ServiceError('validation_failed', { message: 'Credential validation failed', errors });
  const write = {
    name: change.name,
    type: change.type,
    dataEncrypted: seal(keyring, change.data, credentialAad(change.name)),
    schema,
    meta: change.meta === undefined ? (existing?.meta ?? null) : change.meta,
    tags: change.tags === undefined ? (existing?.tags ?? []) : [...new Set(change.tags ?? [])],
    description: change.description === undefined ? (existing?.description ?? null) : change.description,
  };
  if (!existing) return insertCredential(q, write);
  const updated = await updateCredential(q, write);
  if (!updated) throw new Error('credential vanished while its name lock was held');
  return updated;
}

/** JSON merge of data fields (RFC 7386, one level): a field set to null is removed. */
function mergeData(stored: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Credentials: encrypted at rest, created or updated by name, read by id or name. */
export async function credentialRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post(
    '/api/credentials',
    {
      schema: {
        tags: ['credentials'],
        summary: 'Create a credential, or update the one with this name (omitted optional fields keep their stored value)',
        body: jsonSchema(storeBody),
        response: withAnswerHeaders(responses({ 200: credentialAnswer, 201: credentialAnswer }), 201, { location: 'the credential created: /api/credentials/{name}' }),
      },
      config: { access: { level: 'admin' } },
    },
    async (req, reply) => {
      const body = req.body as v.InferOutput<typeof storeBody>;
      if (!isCredentialType(body.type)) throw unknownType(body.type);
      const { row, created } = await deps.db.tx(async (q) => {
        await lockCredentialName(q, body.name);
        const existing = await getCredentialByName(q, body.name);
        return { row: await writeCredential(q, deps.keyring, body, existing), created: existing === undefined };
      });
      req.log.info({ credential: row.name, type: row.type, created }, created ? 'credential created' : 'credential updated');
      // A 201 says where the created credential is (RFC 9110, 15.3.2), as the catalog's does.
      if (created) reply.code(201).header('location', `/api/credentials/${encodeURIComponent(row.name)}`);
      return presentCredential(row);
    },
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    const body = method === 'PUT' ? putBody : patchBody;
    app.route({
      method,
      url: '/api/credentials/:name',
      schema: {
        tags: ['credentials'],
        summary:
          method === 'PUT'
            ? 'Replace the data of a credential (re-sealed); omitted type, description, tags, meta and schema keep their stored value'
            : 'Merge data fields into a credential (a field set to null is removed) and re-seal it; omitted metadata is kept',
        params: jsonSchema(nameParams),
        body: jsonSchema(body),
        response: responses({ 200: credentialAnswer }),
      },
      config: { access: { level: 'admin' } },
      handler: async (req) => {
        const { name: identifier } = req.params as v.InferOutput<typeof nameParams>;
        const change = req.body as v.InferOutput<typeof patchBody>;
        const row = await deps.db.tx(async (q) => {
          const name = await credentialNameOf(q, identifier);
          await lockCredentialName(q, name);
          const existing = await getCredentialByName(q, name);
          if (!existing) throw notFound(`credential '${identifier}'`);
          const data = method === 'PUT' ? (change.data ?? {}) : mergeData(openCredentialData(deps.keyring, existing, req.log), change.data ?? {});
          return writeCredential(q, deps.keyring, { ...change, name, type: change.type ?? existing.type, data }, existing);
        });
        req.log.info({ credential: row.name, type: row.type }, 'credential updated');
        return presentCredential(row);
      },
    });
  }

  app.post(
    '/api/credentials/:name/test',
    {
      schema: {
        tags: ['credentials'],
        summary:
          'Try a credential against its target: postgres connects and runs SELECT 1; bearer, basic, api_key and custom send a GET to `url` with their auth; nats connects. Answers {ok, message, type, duration_ms, status?}, never the data',
        params: jsonSchema(nameParams),
        body: jsonSchema(testBody),
        response: responses({ 200: testAnswer }),
      },
      config: { access: { level: 'admin' } },
    },
    async (req) => {
      const { name } = req.params as v.InferOutput<typeof nameParams>;
      const body = req.body as v.InferOutput<typeof testBody>;
      const row = await findCredential(deps.db, name);
      if (!row) throw notFound(`credential '${name}'`);
      const data = openCredentialData(deps.keyring, row, req.log);
      const result = await testCredential({ name: row.name, type: row.type, data }, body?.url);
      // The message stays out of the log: it is masked, but the log needs no more than the outcome.
      req.log.info({ credential: row.name, type: row.type, ok: result.ok, status: result.status }, 'credential tested');
      return result;
    },
  );

  app.get(
    '/api/credential-types',
    { schema: { tags: ['credentials'], summary: 'The credential types with their fields (which are secret, which required) and connection test, as the console builds its form', response: responses({ 200: typesAnswer }) }, config: { access: { level: 'viewer' } } },
    async () => ({ types: CREDENTIAL_TYPE_SPECS.map(({ schema: _schema, ...spec }) => spec) }),
  );

  app.get(
    '/api/credentials',
    { schema: { tags: ['credentials'], summary: 'List credentials (metadata); q searches name, description and tags', querystring: jsonSchema(listQuery), response: responses({ 200: listAnswer }) }, config: { access: { level: 'viewer' } }, preValidation: emptyQueryValuesAbsent },
    async (req) => {
      const { type, q } = req.query as v.InferOutput<typeof listQuery>;
      const rows = await listCredentials(deps.db, { type, search: q });
      const credentials = rows.map(presentCredential);
      return { credentials, count: credentials.length };
    },
  );

  app.get(
    '/api/credentials/:name',
    {
      schema: {
        tags: ['credentials'],
        summary: 'A credential by id or name; include_data=true adds the decrypted data',
        params: jsonSchema(nameParams),
        querystring: jsonSchema(getQuery),
        headers: claimHeadersSchema(),
        response: responses({ 200: readAnswer }),
      },
      // Metadata for viewers; the data (include_data=true) for admins and workers, checked below.
      config: { access: { level: 'viewer', worker: true } },
    },
    async (req) => {
      const { name: identifier } = req.params as v.InferOutput<typeof nameParams>;
      const { include_data: includeData } = req.query as v.InferOutput<typeof getQuery>;
      if (includeData) {
        requireAccess(req, CREDENTIAL_DATA_ACCESS);
        // The worker token: only for a command it holds whose tasks name the credential (by name).
        await requireWorkerGrant(req, deps, { kind: 'credential', name: identifier });
      }
      const row = await findCredential(deps.db, identifier);
      if (!row) throw notFound(`credential '${identifier}'`);
      if (!includeData) return presentCredential(row);
      if (req.identity?.via === 'worker' && row.name !== identifier) throw notFound(`credential '${identifier}'`);
      const data = openCredentialData(deps.keyring, row, req.log);
      req.log.debug({ credential: row.name }, 'credential data read');
      return { ...presentCredential(row), data };
    },
  );

  app.delete(
    '/api/credentials/:name',
    { schema: { tags: ['credentials'], summary: 'Delete a credential by name (or id, as GET reads it)', params: jsonSchema(nameParams), response: responses({ 200: deletedAnswer }) }, config: { access: { level: 'admin' } } },
    async (req) => {
      const { name: identifier } = req.params as v.InferOutput<typeof nameParams>;
      // Under the name's lock, as every write of it: an update that read the row then finds it gone only after this commits.
      const name = await deps.db.tx(async (q) => {
        const name = await credentialNameOf(q, identifier);
        await lockCredentialName(q, name);
        return (await deleteCredential(q, name)) ? name : undefined;
      });
      if (!name) throw notFound(`credential '${identifier}'`);
      req.log.info({ credential: name }, 'credential deleted');
      return { status: 'success', message: `Credential '${name}' deleted`, name };
    },
  );
}
