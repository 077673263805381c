// Worker-side keychain resolution: the values of `keychain.<entry>.<field>` for a claimed command.
// For each referenced entry: read it from the server's keychain API; a live entry is used as it is;
// a missing one is created from its playbook definition (token request or secret manager) and
// stored; an expired one is renewed when it auto-renews, else it resolves to {} so the templates
// that use it fail the step. The keychain-entry machine decides and words the KEYCHAIN: log lines.
// Concurrent commands of this worker that need the same entry share one read and one token request.
// Secrets (tokens, client secrets, response bodies) never reach a log line or an error.
import * as v from 'valibot';
import { KeychainDefinitionSchema, type KeychainDefinition } from '../dsl/playbook.schema.ts';
import { renderValue } from '../dsl/render.ts';
import { cacheKey, type KeychainScope } from '../keychain/cache-key.ts';
import { answeredLifetime, defaultTtlSeconds, entryLifetime, positiveSeconds, RENEWAL_FALLBACK_TTL_SECONDS, renewConfigDefaults, wholeSeconds, renewConfigSchema, tokenFromRenewResponse, type ResolvedRenewConfig } from '../keychain/ttl.ts';
import type { Logger } from '../log.ts';
import type { PresentedCommand, ResolvedCredential } from '../protocol.ts';
import { applyCredential, credentialTokenUrl, fetchCredential, providerToken, type Fallible } from './keychain-auth.ts';
import { claimHeaders } from './claim-headers.ts';
import { EntryFlow } from './keychain-entry-flow.ts';
import { renewalTurn, type Turn } from './keychain-renewal-turn.ts';
import { checkEntrySchema } from './keychain-schema-check.ts';
import { KEYCHAIN_REQUEST_TIMEOUT_MS, sendOutbound, statusText, type OutboundRequest } from './keychain-http.ts';
import { fetchSecrets } from './keychain-secret-manager.ts';
import type { KeychainResolver } from './run-command.ts';
import type { ServerClient } from './server-client.ts';
import { isObject } from '../objects.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { unresolvedKeychainEntry, unresolvedReason } from '../dsl/unresolved-keychain-entry.ts';

export type KeychainResolverDeps = {
  client: ServerClient;
  log: Logger;
  env: Readonly<Record<string, string | undefined>>;
  /** The HTTP client of token and secret-manager requests (tests may count or fake them). */
  fetch?: typeof fetch;
};

const MS_PER_SECOND = 1000;
const DEFAULT_TOKEN_FIELD = 'access_token';
const DEFAULT_TTL_FIELD = 'expires_in';

type TokenData = Record<string, unknown>;
/** `undefined`: the entry does not exist and cannot be made (no definition); templates then name it as unavailable. */
type Resolution = TokenData | undefined;

/** A renewed value and how to store it: `ttlSeconds` null leaves the TTL to the scope default. */
type Renewal = {
  tokenData: TokenData;
  ttlSeconds: number | null;
  lifetimeSeconds: number;
  /** The definition's kind; null without a definition, so the store keeps the entry's own type. */
  kind: string | null;
  renewConfig: ResolvedRenewConfig | null;
};

/** What one command needs to reach an entry. */
type EntryTarget = {
  name: string;
  catalogId: number;
  executionId: number;
  parentExecutionId: number | null;
  scope: KeychainScope;
  definition: KeychainDefinition | undefined;
  /** The claim of the command that needs it (claim-headers.ts), sent with every keychain and credential request. */
  claim: Record<string, string>;
};

const tokenDataSchema = v.pipe(v.custom<Record<string, unknown>>(isObject, 'token_data must be an object'), ownKeysRecord(v.string(), v.unknown()));
const ReadAnswer = v.variant('status', [
  v.looseObject({ status: v.literal('success'), token_data: tokenDataSchema, schema: v.optional(v.unknown()) }),
  v.looseObject({ status: v.literal('expired'), auto_renew: v.optional(v.boolean(), false), renew_config: v.optional(v.unknown()), schema: v.optional(v.unknown()) }),
  v.looseObject({ status: v.literal('not_found') }),
]);
type ReadAnswer = v.InferOutput<typeof ReadAnswer>;

const Id = v.union([v.pipe(v.number(), v.integer(), v.minValue(1)), v.pipe(v.string(), v.regex(/^\d{1,15}$/), v.transform(Number))]);
const CommandIds = v.object({ execution_id: Id, catalog_id: Id });
const ExecutionContext = v.looseObject({ parent_id: v.optional(v.nullable(Id)), root_id: v.optional(v.nullable(Id)) });

/**
 * Whether a token answer must hold its token field: an oauth2 one always, an http one when its
 * definition names the field; otherwise the whole answer is the value, when made and when renewed.
 * Without a definition the stored renew_config says, and its token_field is required.
 */
const needsTokenField = (definition: KeychainDefinition | undefined): boolean => !(definition?.kind === 'http' && definition.token_field === undefined);

/** Header values the definition gives as scalars, as text; anything else is dropped. */
function stringHeaders(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  const headers: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string') headers[key] = item;
    else if (typeof item === 'number' || typeof item === 'boolean') headers[key] = String(item);
  }
  return headers;
}

/** What a log line about an entry names: the entry and the execution that needed it, never a value. */
const logFields = (target: EntryTarget): Record<string, unknown> => ({ keychain: target.name, execution_id: target.executionId });

const optionalText = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The playbook's definitions by name; invalid ones are dropped with a warning naming only the index. */
function definitionsOf(raw: unknown, log: Logger): Map<string, KeychainDefinition> {
  const byName = new Map<string, KeychainDefinition>();
  if (!Array.isArray(raw)) return byName;
  raw.forEach((item, index) => {
    const parsed = v.safeParse(KeychainDefinitionSchema, item);
    if (parsed.success) byName.set(parsed.output.name, parsed.output);
    else log.warn({ index }, 'keychain definition is invalid; ignored');
  });
  return byName;
}

/** Creates the resolver a worker calls with each claimed command and the entry names its tasks use. */
export function createKeychainResolver(deps: KeychainResolverDeps): KeychainResolver {
  const { client, log, env } = deps;
  const fetchImpl = deps.fetch ?? fetch;
  const inFlight = new Map<string, Promise<Resolution>>();

  const failed = (what: 'create' | 'store', target: EntryTarget, reason: string): void => {
    const message = what === 'create' ? `KEYCHAIN: Failed to create '${target.name}'` : `KEYCHAIN: Failed to store '${target.name}'`;
    log.warn({ ...logFields(target), reason }, message);
  };

  async function read(target: EntryTarget): Promise<Fallible<ReadAnswer>> {
    const query = new URLSearchParams({ scope_type: target.scope, execution_id: String(target.executionId) });
    try {
      const answer = await client.request<unknown>('GET', `/api/keychain/${target.catalogId}/${encodeURIComponent(target.name)}?${query}`, undefined, undefined, { headers: target.claim });
      const parsed = v.safeParse(ReadAnswer, answer);
      return parsed.success ? { ok: true, value: parsed.output } : { ok: false, reason: 'the keychain answer has an unexpected shape' };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }

  /** The entry when a read finds it live (checked against its schema), else undefined. */
  async function readLive(target: EntryTarget): Promise<TokenData | undefined> {
    const answer = await read(target);
    if (!answer.ok || answer.value.status !== 'success') return undefined;
    checkEntrySchema(target.name, answer.value.token_data, answer.value.schema, log, logFields(target));
    return answer.value.token_data;
  }

  /** This worker's turn to make the entry, or the entry another worker made meanwhile (keychain-renewal-turn.ts). */
  function turnFor(target: EntryTarget): Promise<Turn<TokenData>> {
    return renewalTurn({
      client,
      entryPath: `/api/keychain/${target.catalogId}/${encodeURIComponent(target.name)}`,
      query: { scope_type: target.scope, execution_id: String(target.executionId) },
      claim: target.claim,
      readLive: () => readLive(target),
    });
  }

  /**
   * Stores a value; `kind` null (renewed without a definition) names no type, and the entry keeps its own.
   * `schema`: the expired entry's, which a renewal stores again (a store replaces the whole entry).
   */
  async function store(
    target: EntryTarget,
    kind: string | null,
    tokenData: TokenData,
    ttlSeconds: number | null,
    renewConfig: ResolvedRenewConfig | null,
    schema?: unknown,
  ): Promise<void> {
    const body = {
      token_data: tokenData,
      ...(schema === undefined || schema === null ? {} : { schema }),
      ...(kind === null ? {} : { credential_type: kind }),
      cache_type: kind === 'secret_manager' ? 'secret' : 'token',
      scope_type: target.scope,
      execution_id: target.scope === 'global' ? null : target.executionId,
      parent_execution_id: target.parentExecutionId,
      ttl_seconds: ttlSeconds === null ? null : wholeSeconds(ttlSeconds),
      auto_renew: renewConfig !== null,
      renew_config: renewConfig,
    };
    try {
      await client.request<unknown>('POST', `/api/keychain/${target.catalogId}/${encodeURIComponent(target.name)}`, body, undefined, { headers: target.claim });
    } catch (error) {
      // The value is still good for this command; the next one will fetch it again.
      failed('store', target, error instanceof Error ? error.message : String(error));
    }
  }

  async function credentialFor(target: EntryTarget, definition: KeychainDefinition): Promise<Fallible<ResolvedCredential | undefined>> {
    if (!definition.auth) return { ok: true, value: undefined };
    return fetchCredential(client, definition.auth, target.claim);
  }

  /** Sends a token request (the definition's or a renew_config), with the `auth` credential applied. */
  async function tokenRequest(kind: string, request: OutboundRequest, credential: ResolvedCredential | undefined) {
    let outbound = request;
    if (credential) {
      const applied = await applyCredential(kind, request, credential, AbortSignal.timeout(KEYCHAIN_REQUEST_TIMEOUT_MS));
      if (!applied.ok) return applied;
      outbound = applied.value;
    }
    return sendOutbound(outbound, fetchImpl);
  }

  /** A secret_manager entry's values, read from the provider with the `auth` credential's token. */
  async function secrets(target: EntryTarget, definition: KeychainDefinition): Promise<Fallible<TokenData>> {
    const credential = await credentialFor(target, definition);
    if (!credential.ok) return credential;
    let token: string | undefined;
    if (credential.value) {
      const result = await providerToken(credential.value, AbortSignal.timeout(KEYCHAIN_REQUEST_TIMEOUT_MS));
      if (!result.ok) return result;
      token = result.value;
    }
    return fetchSecrets(
      {
        provider: definition.provider,
        endpoint: definition.endpoint,
        region: optionalText(definition.region),
        vault: optionalText(definition.vault_url) ?? optionalText(definition.vault),
        map: definition.map ?? {},
      },
      token,
      env,
      fetchImpl,
    );
  }

  /** Makes a missing entry from its definition and stores it; the value, or a reason. */
  async function create(target: EntryTarget, definition: KeychainDefinition): Promise<Fallible<{ tokenData: TokenData; ttlSeconds: number }>> {
    if (definition.kind === 'secret_manager') {
      const values = await secrets(target, definition);
      if (!values.ok) return values;
      await store(target, 'secret_manager', values.value, definition.ttl_seconds ?? null, null);
      return { ok: true, value: { tokenData: values.value, ttlSeconds: definition.ttl_seconds ?? defaultTtlSeconds(target.scope) } };
    }
    const credential = await credentialFor(target, definition);
    if (!credential.ok) return credential;
    const endpoint = definition.endpoint ?? credentialTokenUrl(credential.value);
    if (!endpoint) return { ok: false, reason: `${definition.kind} entries need an endpoint (or an oauth2 auth credential with a token_url)` };
    const request: OutboundRequest = {
      url: endpoint,
      method: (definition.method ?? 'POST').toUpperCase(),
      headers: stringHeaders(definition.headers),
      ...(isObject(definition.data) ? { data: definition.data } : {}),
    };
    const sentAt = Date.now();
    const answer = await tokenRequest(definition.kind, request, credential.value);
    if (!answer.ok) return answer;
    if (answer.status !== 200) return { ok: false, reason: `token endpoint answered ${statusText(answer.status)}, expected 200` };
    if (!isObject(answer.body)) return { ok: false, reason: 'token endpoint answer is not a JSON object' };
    const tokenField = definition.token_field ?? DEFAULT_TOKEN_FIELD;
    const ttlField = definition.ttl_field ?? DEFAULT_TTL_FIELD;
    if (needsTokenField(definition)) {
      const token = answer.body[tokenField];
      if (typeof token !== 'string' || token === '') return { ok: false, reason: `token endpoint answer has no non-empty string field '${tokenField}'` };
    }
    const tokenData = { ...answer.body };
    const ttlSeconds = entryLifetime(answeredLifetime(positiveSeconds(tokenData[ttlField]), sentAt, Date.now()), definition.ttl_seconds, target.scope);
    // The renew request is the definition's own: the credential is applied again at renewal, so a
    // rotated client secret is picked up and no secret is copied into the entry.
    const renewConfig =
      definition.auto_renew === true
        ? renewConfigDefaults({
            endpoint,
            method: request.method,
            headers: request.headers,
            ...(request.data === undefined ? {} : { data: request.data }),
            token_field: tokenField,
            ttl_field: ttlField,
          })
        : null;
    await store(target, definition.kind, tokenData, ttlSeconds, renewConfig);
    return { ok: true, value: { tokenData, ttlSeconds } };
  }

  /**
   * A fresh value for an expired entry, per its renew_config (or, for secret_manager, by reading the
   * secrets again), and how to store it; the caller stores it when the machine says so.
   */
  async function renew(target: EntryTarget, renewConfig: unknown): Promise<Fallible<Renewal>> {
    const definition = target.definition;
    if (definition?.kind === 'secret_manager') {
      const values = await secrets(target, definition);
      if (!values.ok) return values;
      const ttlSeconds = definition.ttl_seconds ?? null;
      return { ok: true, value: { tokenData: values.value, ttlSeconds, lifetimeSeconds: ttlSeconds ?? defaultTtlSeconds(target.scope), kind: 'secret_manager', renewConfig: null } };
    }
    const parsed = v.safeParse(renewConfigSchema, renewConfig);
    if (!parsed.success) return { ok: false, reason: 'the entry has no usable renew_config' };
    const cfg = renewConfigDefaults(parsed.output);
    const request: OutboundRequest = { url: cfg.endpoint, method: cfg.method, headers: cfg.headers, ...(cfg.data === undefined ? {} : { data: cfg.data }) };
    // Without a definition there is no credential to apply, and the stored entry keeps its own type.
    let answer: Awaited<ReturnType<typeof tokenRequest>>;
    const sentAt = Date.now();
    if (definition) {
      const credential = await credentialFor(target, definition);
      if (!credential.ok) return credential;
      answer = await tokenRequest(definition.kind, request, credential.value);
    } else {
      answer = await sendOutbound(request, fetchImpl);
    }
    if (!answer.ok) return answer;
    const result = tokenFromRenewResponse(answer.status, answer.body, cfg, !needsTokenField(definition));
    if (!result.ok) return result;
    // Neither the answer nor the definition says: the spec's renewal fallback (3600 s), not the
    // scope default an entry is made with (its Limits table names the two apart).
    const answered = answeredLifetime(positiveSeconds(result.tokenData[cfg.ttl_field]), sentAt, Date.now());
    const lifetime = answered === undefined && definition?.ttl_seconds === undefined ? RENEWAL_FALLBACK_TTL_SECONDS : entryLifetime(answered, definition?.ttl_seconds, target.scope);
    return { ok: true, value: { tokenData: result.tokenData, ttlSeconds: lifetime, lifetimeSeconds: lifetime, kind: definition?.kind ?? null, renewConfig: cfg } };
  }

  async function resolveEntry(target: EntryTarget): Promise<Resolution> {
    const { name } = target;
    const answer = await read(target);
    if (!answer.ok) {
      log.warn({ ...logFields(target), reason: answer.reason }, `KEYCHAIN: Entry '${name}' could not be read`);
      return unresolvedKeychainEntry(`it could not be read: ${answer.reason}`);
    }
    if (answer.value.status === 'success') {
      checkEntrySchema(name, answer.value.token_data, answer.value.schema, log, logFields(target));
      return answer.value.token_data;
    }

    const definition = target.definition;
    const expired = answer.value.status === 'expired';
    // A secret_manager entry is stored without renew_config; its definition's auto_renew reads the secrets again.
    const autoRenew = expired && (answer.value.auto_renew === true || (definition?.kind === 'secret_manager' && definition.auto_renew === true));
    const flow = new EntryFlow({ name, scope: target.scope, autoRenew, found: expired }, log, { execution_id: target.executionId });
    flow.send({ type: 'READ', now: Date.now() });

    if (flow.outcome === 'not_found') {
      if (!definition) {
        log.warn(logFields(target), `keychain entry '${name}' has no definition in the playbook; nothing to create`);
        return undefined;
      }
      const turn = await turnFor(target);
      if (turn.kind === 'live') return turn.value;
      const created = await create(target, definition).finally(turn.release);
      if (!created.ok) {
        failed('create', target, created.reason);
        return unresolvedKeychainEntry(`it could not be made: ${created.reason}`);
      }
      flow.send({ type: 'STORED', expiresAt: Date.now() + created.value.ttlSeconds * MS_PER_SECOND });
      return created.value.tokenData;
    }

    // Expired: the machine accepts RENEW only for an auto-renewing entry; otherwise the entry is {}.
    if (!flow.send({ type: 'RENEW' }).requestRenewal) return unresolvedKeychainEntry('it expired, and it does not auto-renew');
    const renewConfig = answer.value.status === 'expired' ? answer.value.renew_config : undefined;
    // Another worker may be renewing it right now: its token is used, not a second one.
    const turn = await turnFor(target);
    if (turn.kind === 'live') return turn.value;
    return renewAndStore(target, flow, renewConfig, answer.value.status === 'expired' ? answer.value.schema : undefined).finally(turn.release);
  }

  /** Renews an expired entry and stores it as the machine says; the renewed value, or {} on failure. */
  async function renewAndStore(target: EntryTarget, flow: EntryFlow, renewConfig: unknown, schema: unknown): Promise<Resolution> {
    const renewed = await renew(target, renewConfig);
    if (!renewed.ok) {
      flow.send({ type: 'RENEW_FAILED', reason: renewed.reason });
      return unresolvedKeychainEntry(`it expired and could not be renewed: ${renewed.reason}`);
    }
    const { tokenData, ttlSeconds, lifetimeSeconds, kind, renewConfig: nextRenewConfig } = renewed.value;
    if (flow.send({ type: 'RENEWED', expiresAt: Date.now() + lifetimeSeconds * MS_PER_SECOND }).storeRenewed) {
      await store(target, kind, tokenData, ttlSeconds, nextRenewConfig, schema);
    }
    return tokenData;
  }

  /** The entry's cache key as the server computes it: concurrent needs of one key share one resolution. */
  function sharedResolution(target: EntryTarget, rootExecutionId: number | null): Promise<Resolution> {
    const owner = target.scope === 'global' ? null : target.scope === 'shared' ? (rootExecutionId ?? target.executionId) : target.executionId;
    // Without the root id a shared entry is keyed by this execution: less sharing, never wrong sharing.
    const key = `${cacheKey(target.name, target.catalogId, target.scope, owner)}${target.scope === 'shared' && rootExecutionId === null ? '~' : ''}`;
    let pending = inFlight.get(key);
    if (!pending) {
      pending = resolveEntry(target)
        .catch((error: unknown): Resolution => {
          const reason = error instanceof Error ? error.message : String(error);
          log.warn({ ...logFields(target), reason }, `KEYCHAIN: Entry '${target.name}' could not be resolved`);
          return unresolvedKeychainEntry(`it could not be resolved: ${reason}`);
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  }

  return async (command: PresentedCommand, names: string[]): Promise<Record<string, unknown>> => {
    const ids = v.safeParse(CommandIds, command);
    if (!ids.success) {
      log.warn({ command_id: command.command_id }, 'keychain: the command has no usable execution_id/catalog_id; entries resolve to {}');
      return Object.fromEntries(names.map((name) => [name, unresolvedKeychainEntry('the command has no usable execution_id or catalog_id')]));
    }
    const definitions = definitionsOf(command.keychain, log);
    const context = isObject(command.context) ? command.context : {};
    const execution = v.safeParse(ExecutionContext, context.execution);
    const parentExecutionId = execution.success ? (execution.output.parent_id ?? null) : null;
    const rootExecutionId = execution.success ? (execution.output.root_id ?? null) : null;
    const claim = claimHeaders(command, command.worker_id ?? '');
    const renderContext: Record<string, unknown> = { ...context };
    delete renderContext.keychain;

    const resolved: Record<string, unknown> = {};
    await Promise.all(
      names.map(async (name) => {
        let definition = definitions.get(name);
        if (definition) {
          try {
            // Definitions may use the command's context (`{{ workload.token_url }}`), never keychain.
            const rendered = v.safeParse(KeychainDefinitionSchema, renderValue(definition, renderContext, `keychain.${name}`));
            if (!rendered.success) throw new Error('the rendered definition is invalid');
            definition = rendered.output;
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            log.warn({ keychain: name, reason }, `keychain definition '${name}' could not be rendered`);
            resolved[name] = unresolvedKeychainEntry(`its definition could not be rendered: ${reason}`);
            return;
          }
        }
        const target: EntryTarget = {
          name,
          catalogId: ids.output.catalog_id,
          executionId: ids.output.execution_id,
          parentExecutionId,
          scope: definition?.scope ?? 'global',
          definition,
          claim,
        };
        const value = await sharedResolution(target, rootExecutionId);
        // Each command gets its own copy: tasks of one command must not see another's changes
        // (an empty one keeps its reason: a copy is another object).
        const reason = value === undefined ? undefined : unresolvedReason(value);
        if (value !== undefined) resolved[name] = reason === undefined ? { ...value } : unresolvedKeychainEntry(reason);
      }),
    );
    return resolved;
  };
}
