import type { TaskOutcomeCode } from '../../machines/error-codes.ts';
import type { ResolvedCredential } from '../protocol.ts';
import { isObject } from '../objects.ts';

// Default header of an `api_key` credential that names none.
const API_KEY_DEFAULT_HEADER = 'X-API-Key';
const API_KEY_DEFAULT_QUERY_PARAM = 'api_key';

export type HttpAuth =
  | { ok: true; headers: Record<string, string>; query: Record<string, string>; secrets: string[] }
  | { ok: false; code: TaskOutcomeCode; message: string };

/** Types whose request authentication needs no round trip (oauth2 fetches a token first: src/worker/tools/credential-auth.ts). */
export const STATIC_HTTP_AUTH_TYPES = ['bearer', 'basic', 'api_key', 'custom'] as const;

/**
 * The headers and query parameters of a bearer, basic, api_key or custom credential, as the http
 * tool sends them, and the secrets they hold; `skipAuthorization` leaves out Authorization (bearer,
 * basic). Messages name the credential and its missing field, never data.
 */
export function staticHttpAuth(credential: ResolvedCredential, skipAuthorization = false): HttpAuth {
  const { name, type, data } = credential;
  const none: HttpAuth = { ok: true, headers: {}, query: {}, secrets: [] };
  const missing = (fields: string): HttpAuth => ({ ok: false, code: 'invalid_credential', message: `credential '${name}' (${type}) has no ${fields} field` });
  switch (type) {
    case 'bearer': {
      if (skipAuthorization) return none;
      const token = stringField(data, 'token', 'access_token');
      return token ? { ok: true, headers: { Authorization: `Bearer ${token}` }, query: {}, secrets: [token] } : missing('token or access_token');
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
