import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import * as v from 'valibot';
import { AnswerTooLarge, answerText } from './answer-limit.ts';
import { describeError } from './outcome.ts';
import { fetchFollowing } from './fetch-following.ts';
import type { ResolvedCredential } from '../../protocol.ts';

// Used when the token response carries no `expires_in` (the spec's renewal TTL fallback).
const OAUTH2_DEFAULT_LIFETIME_SECONDS = 3600;
// A cached token is dropped this long before it expires (at most a tenth of its lifetime), so a
// request never leaves with a token that dies in flight.
const OAUTH2_EXPIRY_MARGIN_SECONDS = 30;
// The token request is shared by concurrent tasks, so it has its own bound instead of one task's signal.
const OAUTH2_TOKEN_REQUEST_TIMEOUT_MS = 30_000;

export type TokenResult = { ok: true; token: string } | { ok: false; message: string };

const OAuth2CredentialSchema = v.looseObject({
  token_url: v.pipe(v.string(), v.url()),
  client_id: v.pipe(v.string(), v.nonEmpty()),
  client_secret: v.pipe(v.string(), v.nonEmpty()),
  scope: v.optional(v.union([v.string(), v.array(v.string())])),
  audience: v.optional(v.string()),
});

const TokenResponseSchema = v.looseObject({
  access_token: v.pipe(v.string(), v.nonEmpty()),
  expires_in: v.optional(v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))])),
});

type CachedToken = { token: string; expiresAtMs: number };
const cache = new Map<string, CachedToken>();
const inFlight = new Map<string, Promise<TokenResult>>();

/**
 * A client-credentials access token for `credential` (fields token_url, client_id, client_secret,
 * scope?), cached in-process per credential until shortly before its `expires_in`. Concurrent
 * callers share one token request. Messages name the credential, never its data.
 */
export async function oauth2Token(credential: ResolvedCredential, signal: AbortSignal, nowMs: () => number = Date.now): Promise<TokenResult> {
  const parsed = v.safeParse(OAuth2CredentialSchema, credential.data);
  if (!parsed.success) {
    const fields = parsed.issues.map((issue) => v.getDotPath(issue) ?? '?').join(', ');
    return { ok: false, message: `oauth2 credential '${credential.name}' needs token_url, client_id and client_secret (bad: ${fields})` };
  }
  const data = parsed.output;
  const scope = Array.isArray(data.scope) ? data.scope.join(' ') : data.scope;
  // The fingerprint makes a rotated secret or a changed scope fetch a new token under the same name.
  const fingerprint = createHash('sha256').update(JSON.stringify([data.token_url, data.client_id, data.client_secret, scope ?? '', data.audience ?? ''])).digest('hex');
  const key = `${credential.name}\u0000${fingerprint}`;

  const cached = cache.get(key);
  if (cached && cached.expiresAtMs > nowMs()) return { ok: true, token: cached.token };

  let request = inFlight.get(key);
  if (!request) {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: data.client_id, client_secret: data.client_secret });
    if (scope) form.set('scope', scope);
    if (data.audience) form.set('audience', data.audience);
    request = requestToken(credential.name, data.token_url, form, key, nowMs).finally(() => inFlight.delete(key));
    inFlight.set(key, request);
  }
  return raceSignal(request, signal, credential.name);
}

/** Drops the cached tokens of a credential, e.g. after a target answered 401 to one of them. */
export function forgetOAuth2Token(credentialName: string): void {
  for (const key of cache.keys()) if (key.startsWith(`${credentialName}\u0000`)) cache.delete(key);
}

async function requestToken(name: string, tokenUrl: string, form: URLSearchParams, key: string, nowMs: () => number): Promise<TokenResult> {
  const failed = (why: string): TokenResult => ({ ok: false, message: `oauth2 token request for credential '${name}' failed: ${why}` });
  // The token's lifetime runs from this at the latest: a slow answer must not lengthen its stay in the cache.
  const sentAtMs = nowMs();
  let response: Response;
  try {
    // The client secret goes to the token_url's origin only, not on to the host a redirect names.
    response = await fetchFollowing(
      new URL(tokenUrl),
      {
        method: 'POST',
        headers: new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }),
        body: form.toString(),
        signal: AbortSignal.timeout(OAUTH2_TOKEN_REQUEST_TIMEOUT_MS),
      },
      [],
      { bodyOriginOnly: true },
    );
  } catch (error) {
    return failed(describeError(error));
  }
  let text: string;
  try {
    text = await answerText(response);
  } catch (error) {
    // Read only as far as a task's answer is (an endless body would fill the worker's memory till the timeout).
    if (error instanceof AnswerTooLarge) return failed(error.message);
    text = '';
  }
  // The body is never quoted in a message: a token endpoint may echo what it was sent.
  if (response.status !== 200) return failed(`HTTP ${response.status} ${response.statusText || STATUS_CODES[response.status] || ''}`.trim());
  const parsed = v.safeParse(TokenResponseSchema, parseTokenBody(text));
  if (!parsed.success) return failed('the response has no access_token');

  const lifetimeSeconds = parsed.output.expires_in ?? OAUTH2_DEFAULT_LIFETIME_SECONDS;
  const marginSeconds = Math.min(OAUTH2_EXPIRY_MARGIN_SECONDS, lifetimeSeconds / 10);
  if (lifetimeSeconds > 0) cache.set(key, { token: parsed.output.access_token, expiresAtMs: sentAtMs + (lifetimeSeconds - marginSeconds) * 1000 });
  return { ok: true, token: parsed.output.access_token };
}

// Most token endpoints answer JSON; a few (GitHub's) answer a form-encoded body.
function parseTokenBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return Object.fromEntries(new URLSearchParams(text));
  }
}

function raceSignal(request: Promise<TokenResult>, signal: AbortSignal, name: string): Promise<TokenResult> {
  if (signal.aborted) return Promise.resolve({ ok: false, message: `oauth2 token request for credential '${name}' aborted` });
  return new Promise((resolve) => {
    const onAbort = () => resolve({ ok: false, message: `oauth2 token request for credential '${name}' aborted` });
    signal.addEventListener('abort', onAbort, { once: true });
    void request.then((result) => {
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    });
  });
}
