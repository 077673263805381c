import * as v from 'valibot';
import type { KeychainScope } from './cache-key.ts';
import { isCalendarDate } from '../calendar-time.ts';
import { isObject } from '../objects.ts';
import { HEADER_NAME_TEXT, HEADER_VALUE_TEXT, isHeaderName, isHeaderValue } from '../credential/http-header.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

export const DEFAULT_LOCAL_TTL_SECONDS = 3600;
export const DEFAULT_SHARED_TTL_SECONDS = 86400;
export const DEFAULT_GLOBAL_TTL_SECONDS = 86400;
/** The longest `ttl_seconds` an entry is stored with (a PostgreSQL integer, about 68 years): the keychain API's bound. */
export const MAX_TTL_SECONDS = 2_147_483_647;
/** Lifetime of a renewed token whose response does not say (no `ttl_field`). */
export const RENEWAL_FALLBACK_TTL_SECONDS = 3600;

const MS_PER_SECOND = 1000;

/** Lifetime an entry gets when the set request names neither `ttl_seconds` nor `expires_at`. */
export function defaultTtlSeconds(scope: KeychainScope): number {
  switch (scope) {
    case 'local':
      return DEFAULT_LOCAL_TTL_SECONDS;
    case 'shared':
      return DEFAULT_SHARED_TTL_SECONDS;
    case 'global':
      return DEFAULT_GLOBAL_TTL_SECONDS;
  }
}

// ISO 8601 as clients write it: a date, or a date-time (T or a space; seconds, fraction and offset optional).
/** A token answer's lifetime field as seconds: a positive number, or text of one; else undefined. */
export function positiveSeconds(value: unknown): number | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

// Of a token's answered lifetime, what is kept back (a tenth, at most this), as the oauth2
// credential cache does: an entry read live must not die on the way to its target.
const TOKEN_EXPIRY_MARGIN_SECONDS = 30;

/**
 * What an entry may live of the lifetime a token answer gives (undefined: it gives none), in whole
 * seconds (at least 1): counted from when its request was sent, the latest the endpoint's clock
 * started (a slow answer made the entry outlive its token by as long), less the margin.
 */
export function answeredLifetime(answered: number | undefined, sentAtMs: number, nowMs: number): number | undefined {
  if (answered === undefined) return undefined;
  const left = answered - Math.min(TOKEN_EXPIRY_MARGIN_SECONDS, answered / 10) - Math.max(0, nowMs - sentAtMs) / MS_PER_SECOND;
  return Math.max(1, Math.floor(left));
}

/**
 * An entry's lifetime: what the token answer says (its ttl_field) bounded by the definition's
 * ttl_seconds (a playbook may renew sooner, never later than the token dies); either alone;
 * the scope's default when neither says (the spec: local 3600 s, global and shared 86400 s).
 */
export function entryLifetime(answered: number | undefined, defined: number | undefined, scope: KeychainScope): number {
  if (answered !== undefined && defined !== undefined) return Math.min(answered, defined);
  return answered ?? defined ?? defaultTtlSeconds(scope);
}

/**
 * The store API takes whole seconds from 1 to MAX_TTL_SECONDS: a fractional lifetime is rounded
 * up, a longer one (a token answer's or a definition's) held at the bound, so the entry is cached.
 */
export const wholeSeconds = (seconds: number): number => Math.min(MAX_TTL_SECONDS, Math.max(1, Math.ceil(seconds)));

const ISO_TIME_RE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Epoch milliseconds of an `expires_at` text: ISO 8601, where a date-time without an offset is UTC
 * (the spec's timestamps are; JavaScript would read it in the server's zone) and a date is its UTC
 * midnight. NaN for other text and for a day that does not exist (JavaScript rolls 02-30 over).
 */
export function expiresAtMs(text: string): number {
  const match = ISO_TIME_RE.exec(text.trim());
  if (!match || !isCalendarDate(match[1])) return NaN;
  const [, day, time, zone] = match;
  if (time === undefined) return Date.parse(`${day}T00:00:00Z`);
  const offset = zone === undefined ? 'Z' : /^[+-]\d{2}$/.test(zone) ? `${zone}:00` : zone.toUpperCase();
  return Date.parse(`${day}T${time}${offset}`);
}

export interface ExpiryRequest {
  scope: KeychainScope;
  ttl_seconds?: number | null;
  expires_at?: Date | string | null;
  now: Date;
}

export interface ResolvedExpiry {
  expiresAt: Date;
  /** Seconds from `now` to `expiresAt` (may be fractional; 0 when `expires_at` is already past). */
  ttlSeconds: number;
  source: 'expires_at' | 'ttl_seconds' | 'default';
}

/**
 * Expiry of a stored keychain entry: `expires_at` wins over `ttl_seconds`, which wins over the
 * scope default. Throws RangeError for an unparseable `expires_at` or a non-positive `ttl_seconds`.
 */
export function resolveExpiry(request: ExpiryRequest): ResolvedExpiry {
  const nowMs = request.now.getTime();
  if (Number.isNaN(nowMs)) throw new RangeError('now must be a valid date');
  const { expires_at: expiresAtInput, ttl_seconds: ttlInput } = request;

  if (expiresAtInput !== undefined && expiresAtInput !== null) {
    const expiresAt = new Date(expiresAtInput instanceof Date ? expiresAtInput.getTime() : expiresAtMs(expiresAtInput));
    if (Number.isNaN(expiresAt.getTime())) throw new RangeError('expires_at must be an ISO 8601 timestamp');
    const ttlSeconds = Math.max(0, (expiresAt.getTime() - nowMs) / MS_PER_SECOND);
    return { expiresAt, ttlSeconds, source: 'expires_at' };
  }
  if (ttlInput !== undefined && ttlInput !== null) {
    if (!Number.isFinite(ttlInput) || ttlInput <= 0) throw new RangeError('ttl_seconds must be a positive number');
    return { expiresAt: new Date(nowMs + ttlInput * MS_PER_SECOND), ttlSeconds: ttlInput, source: 'ttl_seconds' };
  }
  const ttlSeconds = defaultTtlSeconds(request.scope);
  return { expiresAt: new Date(nowMs + ttlSeconds * MS_PER_SECOND), ttlSeconds, source: 'default' };
}

// Fixed texts: valibot's own quote the value sent, and a renew_config holds client secrets (its
// headers and data; a key in the endpoint's query), so the 422 of a malformed one must not.
const NON_EMPTY_TEXT = 'must be a non-empty text';
const nonEmptyText = v.pipe(v.string(NON_EMPTY_TEXT), v.nonEmpty(NON_EMPTY_TEXT));
const RENEW_METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Valibot schema of a stored `renew_config` (the token request that renews an entry); no issue quotes a value. */
export const renewConfigSchema = v.object({
  // The worker renews over HTTP only: any other scheme would be stored and fail at every renewal.
  // (valibot runs every action of a pipe: one that is no URL at all is v.url's to name.)
  endpoint: v.pipe(v.string('must be a URL'), v.url('must be a URL'), v.check((url) => !URL.canParse(url) || /^https?:$/.test(new URL(url).protocol), 'must be an http or https URL')),
  // What the worker's fetch sends (it refuses anything else at every renewal, quoting the value).
  method: v.optional(v.pipe(nonEmptyText, v.check((m) => RENEW_METHODS.includes(m.toUpperCase()), `must be an HTTP method (${RENEW_METHODS.join(', ')}, any case)`))),
  headers: v.optional(
    v.pipe(
      ownKeysRecord(v.string(), v.pipe(v.string('must be a text'), v.check(isHeaderValue, `must be ${HEADER_VALUE_TEXT}`)), 'must be a JSON object'),
      v.check((headers) => Object.keys(headers).every(isHeaderName), `must be keyed by ${HEADER_NAME_TEXT}`),
    ),
  ),
  data: v.optional(ownKeysRecord(v.string(), v.unknown(), 'must be a JSON object')),
  token_field: v.optional(nonEmptyText),
  ttl_field: v.optional(nonEmptyText),
});

export type RenewConfig = v.InferOutput<typeof renewConfigSchema>;

export interface ResolvedRenewConfig {
  endpoint: string;
  method: string;
  headers: Record<string, string>;
  data?: Record<string, unknown>;
  token_field: string;
  ttl_field: string;
}

/** Fills the spec's defaults: method POST, token_field access_token, ttl_field expires_in, no headers. */
export function renewConfigDefaults(cfg: RenewConfig): ResolvedRenewConfig {
  return {
    endpoint: cfg.endpoint,
    method: (cfg.method ?? 'POST').toUpperCase(),
    headers: cfg.headers ?? {},
    ...(cfg.data === undefined ? {} : { data: cfg.data }),
    token_field: cfg.token_field ?? 'access_token',
    ttl_field: cfg.ttl_field ?? 'expires_in',
  };
}

export type RenewResult =
  | { ok: true; tokenData: Record<string, unknown>; ttlSeconds: number }
  | { ok: false; reason: string };

/**
 * Interprets a token endpoint's answer: success only on HTTP 200 with a JSON object holding a
 * non-empty string at `token_field`; the whole object becomes token_data. `reason` never quotes the body.
 * `wholeAnswer`: no field is required (an `http` entry defined without `token_field` is its whole
 * answer when made, so its renewal must take the same answer).
 */
export function tokenFromRenewResponse(status: number, body: unknown, cfg: RenewConfig, wholeAnswer = false): RenewResult {
  const { token_field: tokenField, ttl_field: ttlField } = renewConfigDefaults(cfg);
  if (status !== 200) return { ok: false, reason: `token endpoint answered HTTP ${status}, expected 200` };
  if (!isObject(body)) return { ok: false, reason: 'token endpoint answer is not a JSON object' };
  const token = body[tokenField];
  if (!wholeAnswer && (typeof token !== 'string' || token === '')) {
    return { ok: false, reason: `token endpoint answer has no non-empty string field '${tokenField}'` };
  }
  const ttlSeconds = positiveSeconds(body[ttlField]) ?? RENEWAL_FALLBACK_TTL_SECONDS;
  return { ok: true, tokenData: { ...body }, ttlSeconds };
}
