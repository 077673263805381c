import { oauth2Token } from './oauth2-token.ts';
import type { ResolvedCredential } from '../../protocol.ts';
import { isObject } from '../../objects.ts';

// Default header of an `api_key` credential that names none.
const API_KEY_DEFAULT_HEADER = 'X-API-Key';
const API_KEY_DEFAULT_QUERY_PARAM = 'api_key';

export type CredentialAuth =
  | { ok: true; headers: Record<string, string>; query: Record<string, string>; secrets: string[] }
  | { ok: false; code: 'invalid_credential' | 'auth'; message: string };

/**
 * The headers and query parameters that authenticate a request with `credential`, by type:
 * bearer, basic, api_key (header or query), oauth2 (client credentials, token cached), custom
 * (its `headers` object). `skipAuthorization` (the task sets Authorization itself) skips the
 * Authorization-producing types, so no token is fetched for nothing. `secrets`: what it puts in
 * the request that the report must mask (a fetched oauth2 token among them). Messages never hold data.
 */
export async function credentialAuth(credential: ResolvedCredential, signal: AbortSignal, skipAuthorization = false): Promise<CredentialAuth> {
  const { name, type, data } = credential;
  const none: CredentialAuth = { ok: true, headers: {}, query: {}, secrets: [] };
  const missing = (fields: string): CredentialAuth => ({ ok: false, code: 'invalid_credential', message: `credential '${name}' (${type}) has no ${fields} field` });
  const bearer = (token: string): CredentialAuth => ({ ok: true, headers: { Authorization: `Bearer ${token}` }, query: {}, secrets: [token] });

  switch (type) {
    case 'bearer': {
      if (skipAuthorization) return none;
      const token = stringField(data, 'token', 'access_token');
      return token ? bearer(token) : missing('token or access_token');
    }
    case 'basic': {
      if (skipAuthorization) return none;
      const username = stringField(data, 'username', 'user');
      const password = stringField(data, 'password') ?? '';
      if (username === undefined) return missing('username');
      const basic = Buffer.from(`${username}:${password}`).toString('base64');
      return { ok: true, headers: { Authorization: `Basic ${basic}` }, query: {}, secrets: [basic] };
    }
    case 'api_key': {
      const key = stringField(data, 'key', 'api_key', 'value');
      if (!key) return missing('key, api_key or value');
      if (data.in === 'query') return { ok: true, headers: {}, query: { [stringField(data, 'param') ?? API_KEY_DEFAULT_QUERY_PARAM]: key }, secrets: [key] };
      return { ok: true, headers: { [stringField(data, 'header') ?? API_KEY_DEFAULT_HEADER]: key }, query: {}, secrets: [key] };
    }
    case 'oauth2':
    case 'oauth2_client_credentials': {
      if (skipAuthorization) return none;
      // A credential that already holds a token (no token endpoint) is used as a bearer token.
      const ready = stringField(data, 'access_token');
      if (ready && data.token_url === undefined) return bearer(ready);
      const result = await oauth2Token(credential, signal);
      return result.ok ? bearer(result.token) : { ok: false, code: 'auth', message: result.message };
    }
    case 'custom': {
      const headers = stringRecord(data.headers);
      if (!headers) return missing('headers');
      const query = stringRecord(data.query) ?? {};
      return { ok: true, headers, query, secrets: [...Object.values(headers), ...Object.values(query)] };
    }
    default:
      return { ok: false, code: 'invalid_credential', message: `credential '${name}' of type '${type}' cannot authenticate an HTTP request` };
  }
}

/** The first of `names` that holds a non-empty string in `data`. */
export function stringField(data: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = data[name];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  return undefined;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (!isObject(value)) return undefined;
  const entries = Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return Object.fromEntries(entries);
}
