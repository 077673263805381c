import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import { initialTransition, transition } from 'xstate';
import { keychainEntryMachine, readOutcome, type ReadOutcome } from '../../machines/keychain-entry.machine.ts';
import type { AppDeps } from '../app-deps.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { keychainAad, open, seal, SealError, unopenedReason } from '../crypto/seal.ts';
import { validateAgainstSchema } from '../crypto/validate-against-schema.ts';
import type { Db } from '../db/db.ts';
import {
  catalogExists,
  deleteKeychainEntry,
  getKeychainEntry,
  listKeychainByCatalog,
  recordKeychainAccess,
  rootExecutionId,
  upsertKeychainEntry,
  type KeychainRow,
} from '../db/keychain.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import { cacheKey, KEYCHAIN_SCOPES, type KeychainScope } from '../keychain/cache-key.ts';
import { expiresAtMs, MAX_TTL_SECONDS, renewConfigDefaults, renewConfigSchema, resolveExpiry, type ResolvedExpiry } from '../keychain/ttl.ts';
import { anyObject, integer, responses, time } from './answers.ts';
import { exactObject, integerIn, integerText, jsonSchema, MAX_ID, oneOf } from './validation.ts';
import { unknownSchemaFields } from './credentials.ts';
import { claimHeadersSchema, requireWorkerGrant } from './worker-grant.ts';
import { isObject } from '../objects.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

const MS_PER_SECOND = 1000;
// A row replaced or expired between the read and the access update is read again, at most this often.
const READ_ATTEMPTS = 3;

/** Associated data of a sealed renew_config: differs from token_data's, so neither can stand in for the other. */
export function renewConfigAad(key: string): string {
  return `${keychainAad(key)}|renew_config`;
}

// No ':' (the cache key separator) and no '|' (the AAD separator), so cache keys stay unambiguous.
const NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.\-]*$/;
const keychainName = v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.regex(NAME_RE, 'must be letters, digits, _ . - (no colons)'));
const idText = integerText(1, MAX_ID);
const idValue = v.union([integerIn(1, MAX_ID), idText]);
// What both JavaScript dates and PostgreSQL timestamptz hold, and a person means.
const EARLIEST_EXPIRY_MS = Date.parse('0001-01-01T00:00:00Z');
const LATEST_EXPIRY_MS = Date.parse('9999-12-31T23:59:59.999Z');
const isStorableTimestamp = (s: string): boolean => {
  const ms = expiresAtMs(s);
  return ms >= EARLIEST_EXPIRY_MS && ms <= LATEST_EXPIRY_MS;
};
// The object test comes first: record() alone accepts an array and outputs a plain copy of it.
const jsonObject = (message: string) => v.pipe(v.custom<Record<string, unknown>>(isObject, message), ownKeysRecord(v.string(), v.unknown(), message));

export const entryParams = v.object({ catalog_id: idText, keychain_name: keychainName });
const catalogParams = v.object({ catalog_id: idText });
// Exact: a misspelt scope_type would mean the global entry, and DELETE would remove it instead.
export const entryQuery = exactObject({
  scope_type: v.optional(oneOf(KEYCHAIN_SCOPES), 'global'),
  execution_id: v.optional(idText),
});
// Exact: a misspelt ttl_seconds or scope_type would store the entry with the default instead.
const storeBody = exactObject({
  token_data: jsonObject('token_data must be a JSON object'),
  // Optional when an entry is stored under the key: a replacement that names none keeps the
  // entry's own (a worker renewing an entry the playbook does not define cannot know it).
  credential_type: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  cache_type: v.optional(v.picklist(['secret', 'token'], 'must be secret or token')),
  scope_type: v.optional(oneOf(KEYCHAIN_SCOPES), 'global'),
  execution_id: v.optional(v.nullable(idValue)),
  parent_execution_id: v.optional(v.nullable(idValue)),
  ttl_seconds: v.optional(v.nullable(integerIn(1, MAX_TTL_SECONDS))),
  expires_at: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.check(isStorableTimestamp, 'must be an ISO 8601 date-time (UTC unless it names an offset) on a real day, from year 1 to 9999'),
      ),
    ),
  ),
  auto_renew: v.optional(v.boolean(), false),
  // Exact too: a misspelt token_field or ttl_field would have the renewal read the default one.
  renew_config: v.optional(v.nullable(exactObject(renewConfigSchema.entries))),
  schema: v.optional(v.nullable(jsonObject('schema must be a JSON object'))),
});

const scopeType = v.picklist(KEYCHAIN_SCOPES);
const entryKey = { keychain_name: v.string(), catalog_id: integer, cache_key: v.string() };
const listAnswer = v.object({
  status: v.literal('success'),
  catalog_id: integer,
  entries: v.array(v.object({ keychain_name: v.string(), cache_key: v.string(), scope_type: scopeType, credential_type: v.string(), expires_at: time, auto_renew: v.boolean(), access_count: integer })),
  count: integer,
});
const readAnswer = v.variant('status', [
  v.object({
    status: v.literal('success'),
    ...entryKey,
    token_data: anyObject,
    schema: v.optional(v.pipe(v.unknown(), v.description("the entry's schema, when it has one: token_data is checked against it"))),
    credential_type: v.string(),
    cache_type: v.picklist(['secret', 'token']),
    scope_type: scopeType,
    expires_at: time,
    ttl_seconds: v.number(),
    accessed_at: time,
    access_count: integer,
    auto_renew: v.boolean(),
    expired: v.literal(false),
  }),
  v.object({
    status: v.literal('expired'),
    ...entryKey,
    auto_renew: v.boolean(),
    expired: v.literal(true),
    renew_config: v.optional(v.pipe(v.unknown(), v.description('with auto_renew: how to get a new token'))),
    schema: v.optional(v.pipe(v.unknown(), v.description("with auto_renew, when the entry has one: the renewed entry is stored with it"))),
  }),
  v.object({ status: v.literal('not_found'), ...entryKey }),
]);
const storedAnswer = v.object({ status: v.literal('success'), message: v.string(), ...entryKey, expires_at: time, ttl_seconds: v.number(), auto_renew: v.boolean() });
const deletedAnswer = v.object({ status: v.literal('success'), message: v.string(), keychain_name: v.string(), catalog_id: integer });

/** What a read of the row gives now: the keychain-entry machine's READ outcome, and whether it counts as an access. */
export function readDecision(
  row: Pick<KeychainRow, 'keychain_name' | 'scope_type' | 'expires_at' | 'auto_renew' | 'access_count'> | undefined,
  name: string,
  scope: KeychainScope,
  nowMs: number,
): { outcome: ReadOutcome; recordAccess: boolean } {
  const [hydrated] = initialTransition(keychainEntryMachine, {
    name: row?.keychain_name ?? name,
    scope: row?.scope_type ?? scope,
    autoRenew: row?.auto_renew ?? false,
    expiresAtMs: row ? row.expires_at.getTime() : null,
    accessCount: row?.access_count ?? 0,
  });
  const [next, actions] = transition(keychainEntryMachine, hydrated, { type: 'READ', now: nowMs });
  return { outcome: readOutcome(next), recordAccess: actions.some((a) => a.type === 'recordAccess') };
}

/** The POST message: states the TTL applied and where it came from. */
export function ttlMessage(expiry: ResolvedExpiry, scope: KeychainScope): string {
  switch (expiry.source) {
    case 'default':
      return `Token cached with TTL ${expiry.ttlSeconds}s (default for ${scope} scope)`;
    case 'ttl_seconds':
      return `Token cached with TTL ${expiry.ttlSeconds}s`;
    case 'expires_at':
      return `Token cached with TTL ${Math.round(expiry.ttlSeconds)}s (until ${expiry.expiresAt.toISOString()})`;
  }
}

/**
 * The spec's Errors table: keychain data failing its schema answers as a credential's does
 * (message `Credential validation failed`, the field-level errors, no values), and `error`
 * carries the keychain service's own text, `Token validation failed: <errors>`.
 */
const tokenInvalid = (errors: string[]): ServiceError =>
  new ServiceError('validation_failed', { message: 'Credential validation failed', errors, error: `Token validation failed: ${errors.join('; ')}` });

const unopenable = (err: SealError) => new ServiceError('conflict', `keychain data cannot be opened with the configured keys: ${unopenedReason(err)}`);

/** Opens token_data; an unopenable row is a 409 and a log line naming the entry, never its data. */
function openTokenData(keyring: Keyring, row: KeychainRow, log: FastifyBaseLogger): Record<string, unknown> {
  try {
    const value = open(keyring, row.data_encrypted, keychainAad(row.cache_key));
    if (isObject(value)) return value;
    log.warn({ cache_key: row.cache_key }, 'keychain token_data is not an object');
    throw new ServiceError('conflict', 'keychain data cannot be opened: it holds no fields');
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    log.warn({ cache_key: row.cache_key, reason: err.message }, 'keychain token_data cannot be opened');
    throw unopenable(err);
  }
}

/** renew_config as the worker needs it: opened when sealed, defaults filled when it is well-formed. */
function openRenewConfig(keyring: Keyring, row: KeychainRow, log: FastifyBaseLogger): unknown {
  let stored = row.renew_config;
  if (typeof stored === 'string') {
    try {
      stored = open(keyring, stored, renewConfigAad(row.cache_key));
    } catch (err) {
      if (!(err instanceof SealError)) throw err;
      log.warn({ cache_key: row.cache_key, reason: err.message }, 'keychain renew_config cannot be opened');
      throw unopenable(err);
    }
  }
  const parsed = v.safeParse(renewConfigSchema, stored);
  return parsed.success ? renewConfigDefaults(parsed.output) : (stored ?? null);
}

/**
 * Cache key a request names, and the execution whose completion removes the entry: the root
 * (shared), the execution itself (local), the given one if any (global). 400 when local/shared lack it.
 */
export async function requestedEntry(
  db: Db,
  name: string,
  catalogId: number,
  scope: KeychainScope,
  executionId: number | null,
): Promise<{ key: string; owner: number | null }> {
  if (scope === 'global') return { key: cacheKey(name, catalogId, 'global', null), owner: executionId };
  if (executionId === null) throw new ServiceError('bad_request', `execution_id is required for scope_type '${scope}'`);
  const owner = scope === 'shared' ? await rootExecutionId(db, executionId) : executionId;
  return { key: cacheKey(name, catalogId, scope, owner), owner };
}

/**
 * The entry a worker route names (its params, and its query's scope and execution), once the
 * caller may reach it (a worker: by the command it holds, worker-grant.ts): name, catalog and key.
 */
export async function grantedEntry(req: FastifyRequest, deps: AppDeps): Promise<{ name: string; catalogId: number; key: string }> {
  const { catalog_id: catalogId, keychain_name: name } = req.params as v.InferOutput<typeof entryParams>;
  const { scope_type: scope, execution_id: executionId } = req.query as v.InferOutput<typeof entryQuery>;
  await requireWorkerGrant(req, deps, { kind: 'keychain', name, catalogId, executionId: executionId ?? null });
  const { key } = await requestedEntry(deps.db, name, catalogId, scope, executionId ?? null);
  return { name, catalogId, key };
}

const iso = (d: Date): string => d.toISOString();

/** Keychain of scoped, expiring tokens and secrets: read, store, delete, list per catalog entry. */
export async function keychainRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/keychain/catalog/:catalog_id',
    { schema: { tags: ['keychain'], summary: 'Every keychain entry of a catalog entry (no token data); 404 for an unknown catalog id', params: jsonSchema(catalogParams), response: responses({ 200: listAnswer }) }, config: { access: { level: 'admin' } } },
    async (req) => {
      const { catalog_id: catalogId } = req.params as v.InferOutput<typeof catalogParams>;
      // An unknown catalog id is 404, as storing under it is; a catalog entry without entries lists none.
      if (!(await catalogExists(deps.db, catalogId))) throw notFound(`catalog entry ${catalogId}`);
      const rows = await listKeychainByCatalog(deps.db, catalogId);
      const entries = rows.map((r) => ({
        keychain_name: r.keychain_name,
        cache_key: r.cache_key,
        scope_type: r.scope_type,
        credential_type: r.credential_type,
        expires_at: iso(r.expires_at),
        auto_renew: r.auto_renew,
        access_count: r.access_count,
      }));
      return { status: 'success', catalog_id: catalogId, entries, count: entries.length };
    },
  );

  app.get(
    '/api/keychain/:catalog_id/:keychain_name',
    {
      schema: {
        tags: ['keychain'],
        summary: 'Read an entry: success (live, counts the access), expired (+renew_config when auto_renew) or not_found',
        params: jsonSchema(entryParams),
        querystring: jsonSchema(entryQuery),
        headers: claimHeadersSchema(),
        response: responses({ 200: readAnswer }),
      },
      // Workers read entries to resolve `keychain.<entry>` for their tasks (of a command they hold: worker-grant.ts).
      config: { access: { level: 'admin', worker: true } },
    },
    async (req) => {
      const { name, catalogId, key } = await grantedEntry(req, deps);
      const { scope_type: scope } = req.query as v.InferOutput<typeof entryQuery>;
      const base = { keychain_name: name, catalog_id: catalogId, cache_key: key };

      for (let attempt = 1; ; attempt++) {
        const now = new Date();
        const row = await getKeychainEntry(deps.db, key);
        const { outcome, recordAccess } = readDecision(row, name, scope, now.getTime());
        if (outcome === 'not_found' || !row) return { status: 'not_found', ...base };
        if (outcome === 'expired') {
          return {
            status: 'expired',
            ...base,
            auto_renew: row.auto_renew,
            expired: true,
            ...(row.auto_renew ? { renew_config: openRenewConfig(deps.keyring, row, req.log) } : {}),
            // The renewer stores the new token with it: a store replaces the entry, schema and all.
            ...(row.auto_renew && row.schema !== null && row.schema !== undefined ? { schema: row.schema } : {}),
          };
        }
        // Live: the count and the data come from one UPDATE … RETURNING, so they belong together.
        const counted = recordAccess ? await recordKeychainAccess(deps.db, key, now) : row;
        if (!counted) {
          if (attempt < READ_ATTEMPTS) continue;
          return { status: 'not_found', ...base };
        }
        return {
          status: 'success',
          ...base,
          token_data: openTokenData(deps.keyring, counted, req.log),
          // Only when there is one: the worker checks token_data against it (a failure warns, the entry is still used).
          ...(counted.schema === null || counted.schema === undefined ? {} : { schema: counted.schema }),
          credential_type: counted.credential_type,
          cache_type: counted.cache_type,
          scope_type: counted.scope_type,
          expires_at: iso(counted.expires_at),
          ttl_seconds: Math.max(0, (counted.expires_at.getTime() - now.getTime()) / MS_PER_SECOND),
          accessed_at: iso(counted.accessed_at),
          access_count: counted.access_count,
          auto_renew: counted.auto_renew,
          expired: false,
        };
      }
    },
  );

  app.post(
    '/api/keychain/:catalog_id/:keychain_name',
    {
      schema: {
        tags: ['keychain'],
        summary: 'Store (or replace) an entry; expires_at wins over ttl_seconds, which wins over the scope default',
        params: jsonSchema(entryParams),
        body: jsonSchema(storeBody),
        headers: claimHeadersSchema(),
        response: responses({ 200: storedAnswer, 201: storedAnswer }),
      },
      // Workers store the entries they create or renew (for a command they hold: worker-grant.ts).
      config: { access: { level: 'admin', worker: true } },
    },
    async (req, reply) => {
      const { catalog_id: catalogId, keychain_name: name } = req.params as v.InferOutput<typeof entryParams>;
      const body = req.body as v.InferOutput<typeof storeBody>;
      const scope = body.scope_type;
      // A schema field the format does not have (`requird`) checked nothing, and the renewer stores
      // the schema again with every renewal: refused as the credential's is, naming it.
      const unknownFields = unknownSchemaFields(body.schema);
      const dataErrors = validateAgainstSchema(body.token_data, body.schema);
      if (dataErrors.length > 0) throw tokenInvalid([...unknownFields, ...dataErrors]);
      if (body.auto_renew && !body.renew_config) throw new ServiceError('bad_request', 'auto_renew requires renew_config');
      await requireWorkerGrant(req, deps, { kind: 'keychain', name, catalogId, executionId: body.execution_id ?? null });
      if (!(await catalogExists(deps.db, catalogId))) throw notFound(`catalog entry ${catalogId}`);

      // Rows carry the execution whose completion removes them (the `kc` cleanup in db/unit-write.ts): owner or root.
      const { key, owner } = await requestedEntry(deps.db, name, catalogId, scope, body.execution_id ?? null);
      // But the schema stored under the key, sent back as it was: the renewer's store of an entry
      // stored before this check (with the schema it read), which must keep renewing. Read only
      // once the caller may reach the entry, so an answer tells no one else what is stored.
      if (unknownFields.length > 0 && !isDeepStrictEqual(body.schema, (await getKeychainEntry(deps.db, key))?.schema)) throw tokenInvalid(unknownFields);
      const expiry = resolveExpiry({ scope, ttl_seconds: body.ttl_seconds, expires_at: body.expires_at, now: new Date() });
      const stored = await upsertKeychainEntry(deps.db, {
        cache_key: key,
        keychain_name: name,
        catalog_id: catalogId,
        credential_type: body.credential_type ?? null,
        cache_type: body.cache_type ?? (body.auto_renew ? 'token' : 'secret'),
        scope_type: scope,
        execution_id: owner,
        parent_execution_id: body.parent_execution_id ?? null,
        data_encrypted: seal(deps.keyring, body.token_data, keychainAad(key)),
        schema: body.schema ?? null,
        expires_at: expiry.expiresAt,
        auto_renew: body.auto_renew,
        // May hold client secrets (token request data, headers): sealed like the token itself.
        renew_config: body.renew_config ? seal(deps.keyring, body.renew_config, renewConfigAad(key)) : null,
      });
      if (!stored) throw new ServiceError('bad_request', `credential_type is required: no entry is stored under '${key}' to keep it from`);
      const { row, created } = stored;
      req.log.info({ cache_key: key, scope_type: scope, ttl_seconds: expiry.ttlSeconds, created }, 'keychain entry stored');
      reply.code(created ? 201 : 200);
      return {
        status: 'success',
        message: ttlMessage(expiry, scope),
        keychain_name: name,
        catalog_id: catalogId,
        cache_key: key,
        expires_at: iso(row.expires_at),
        ttl_seconds: expiry.ttlSeconds,
        auto_renew: row.auto_renew,
      };
    },
  );

  app.delete(
    '/api/keychain/:catalog_id/:keychain_name',
    {
      schema: {
        tags: ['keychain'],
        summary: 'Delete an entry (same scope_type/execution_id query as GET)',
        params: jsonSchema(entryParams),
        querystring: jsonSchema(entryQuery),
        response: responses({ 200: deletedAnswer }),
      },
      config: { access: { level: 'admin' } },
    },
    async (req) => {
      const { catalog_id: catalogId, keychain_name: name } = req.params as v.InferOutput<typeof entryParams>;
      const { scope_type: scope, execution_id: executionId } = req.query as v.InferOutput<typeof entryQuery>;
      const { key } = await requestedEntry(deps.db, name, catalogId, scope, executionId ?? null);
      if (!(await deleteKeychainEntry(deps.db, key))) throw notFound(`keychain entry '${key}'`);
      req.log.info({ cache_key: key }, 'keychain entry deleted');
      return { status: 'success', message: `Keychain entry '${name}' deleted`, keychain_name: name, catalog_id: catalogId };
    },
  );
}
