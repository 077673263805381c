// The `auth` credential of a keychain definition: fetched from the server, then applied to the
// token request (OAuth2 client credentials, or the headers the credential type gives) or turned
// into the bearer token a secret manager wants. Reasons name the credential, never its data.
import * as v from 'valibot';
import type { OutboundRequest } from './keychain-http.ts';
import { ServerError, unopenableCredential, type ServerClient } from './server-client.ts';
import { credentialAuth, stringField } from './tools/credential-auth.ts';
import { oauth2Token } from './tools/oauth2-token.ts';
import type { ResolvedCredential } from '../protocol.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

export type Fallible<T> = { ok: true; value: T } | { ok: false; reason: string };

const CredentialResponse = v.looseObject({
  name: v.string(),
  type: v.string(),
  data: v.optional(v.nullable(ownKeysRecord(v.string(), v.unknown()))),
});

const OAUTH2_TYPES = new Set(['oauth2', 'oauth2_client_credentials']);

const ClientCredentials = v.looseObject({
  client_id: v.pipe(v.string(), v.nonEmpty()),
  client_secret: v.pipe(v.string(), v.nonEmpty()),
  token_url: v.optional(v.pipe(v.string(), v.url())),
  scope: v.optional(v.union([v.string(), v.array(v.string())])),
  audience: v.optional(v.string()),
});

/** `GET /api/credentials/{name}?include_data=true` for the claim `claim` names (claim-headers.ts), validated. */
export async function fetchCredential(client: ServerClient, name: string, claim: Record<string, string>): Promise<Fallible<ResolvedCredential>> {
  let answer: unknown;
  try {
    answer = await client.request<unknown>('GET', `/api/credentials/${encodeURIComponent(name)}?include_data=true`, undefined, undefined, { headers: claim });
  } catch (error) {
    if (error instanceof ServerError && error.status === 404) return { ok: false, reason: `credential '${name}' not found` };
    if (error instanceof ServerError && error.status === 403) return { ok: false, reason: `credential '${name}' is not given to this command (its tasks must name it)` };
    return { ok: false, reason: unopenableCredential(error) ?? `credential '${name}' could not be fetched` };
  }
  const parsed = v.safeParse(CredentialResponse, answer);
  if (!parsed.success) return { ok: false, reason: `credential '${name}' answer has an unexpected shape` };
  return { ok: true, value: { name: parsed.output.name, type: parsed.output.type, data: parsed.output.data ?? {} } };
}

/** The token URL an OAuth2 credential names, used when the definition gives no endpoint. */
export function credentialTokenUrl(credential: ResolvedCredential | undefined): string | undefined {
  if (!credential || !OAUTH2_TYPES.has(credential.type)) return undefined;
  const url = credential.data.token_url;
  return typeof url === 'string' && url !== '' ? url : undefined;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name.toLowerCase());
}

/**
 * The token request with `credential` applied. For an `oauth2` entry with a client-credentials
 * credential: a form-encoded client-credentials grant (the definition's data may add or override
 * grant fields; client_id/client_secret always come from the credential). Otherwise the headers
 * (and query parameters) the credential type authenticates with; headers the definition sets win.
 */
export async function applyCredential(
  kind: string,
  request: OutboundRequest,
  credential: ResolvedCredential,
  signal: AbortSignal,
): Promise<Fallible<OutboundRequest>> {
  if (kind === 'oauth2' && OAUTH2_TYPES.has(credential.type)) {
    const parsed = v.safeParse(ClientCredentials, credential.data);
    if (!parsed.success) return { ok: false, reason: `oauth2 credential '${credential.name}' needs client_id and client_secret` };
    const { client_id: clientId, client_secret: clientSecret, scope, audience } = parsed.output;
    const headers = { ...request.headers };
    if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'application/x-www-form-urlencoded';
    const data: Record<string, unknown> = {
      grant_type: 'client_credentials',
      ...(scope === undefined ? {} : { scope: Array.isArray(scope) ? scope.join(' ') : scope }),
      ...(audience === undefined ? {} : { audience }),
      ...request.data,
      client_id: clientId,
      client_secret: clientSecret,
    };
    return { ok: true, value: { ...request, headers, data } };
  }
  const auth = await credentialAuth(credential, signal, hasHeader(request.headers, 'authorization'));
  if (!auth.ok) return { ok: false, reason: auth.message };
  const headers = { ...auth.headers, ...request.headers };
  let url = request.url;
  if (Object.keys(auth.query).length > 0) {
    const withQuery = new URL(request.url);
    for (const [key, value] of Object.entries(auth.query)) withQuery.searchParams.set(key, value);
    url = withQuery.toString();
  }
  return { ok: true, value: { ...request, url, headers } };
}

/** The bearer token a secret manager is called with: from a bearer, api_key or oauth2 credential. */
export async function providerToken(credential: ResolvedCredential, signal: AbortSignal): Promise<Fallible<string>> {
  const { name, type, data } = credential;
  switch (type) {
    case 'bearer': {
      const token = stringField(data, 'token', 'access_token');
      return token ? { ok: true, value: token } : { ok: false, reason: `credential '${name}' (bearer) has no token field` };
    }
    case 'api_key': {
      const key = stringField(data, 'key', 'api_key', 'value', 'token');
      return key ? { ok: true, value: key } : { ok: false, reason: `credential '${name}' (api_key) has no key field` };
    }
    case 'oauth2':
    case 'oauth2_client_credentials': {
      const ready = stringField(data, 'access_token');
      if (ready && data.token_url === undefined) return { ok: true, value: ready };
      const result = await oauth2Token(credential, signal);
      return result.ok ? { ok: true, value: result.token } : { ok: false, reason: result.message };
    }
    default:
      return { ok: false, reason: `credential '${name}' of type '${type}' cannot give a secret manager token (use bearer, api_key or oauth2)` };
  }
}
