import pino from 'pino';
import { isPlainObject } from './objects.ts';

export const REDACTED = '[redacted]';
/** Levels below the logged object that are inspected; deeper objects are not printed. */
export const MAX_REDACT_DEPTH = 12;
/** Values inspected per log line; the rest are not printed, so a huge object costs little. */
export const MAX_REDACT_NODES = 5_000;

// Matched against the key in snake case (`x-api-key`, `apiKey` → `x_api_key`, `api_key`):
// headers (authorization, cookie, set-cookie), passwords, secrets (client_secret), tokens
// (access_token, refresh_token, x-auth-token) and API or private keys.
const SECRET_KEY =
  /(?:^|_)(?:authorization|cookies?|password|passwd|passphrase|secrets?|token|api_?key|private_?key|secret_?key|access_?key)$/;
// Credential and keychain bodies keep their secret values under `data` (sealed: `data_encrypted`,
// `token_data`), whatever the nesting: `req.body.data` of POST /api/credentials, `credential.data`.
const DATA_KEY = /^(?:data|token_data|data_encrypted)$/;

const snakeCase = (key: string): string =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toLowerCase();

// Keys repeat (every request's logger binds the same few): the verdict is remembered, up to a bound.
const MAX_REMEMBERED_KEYS = 4_096;
const verdicts = new Map<string, boolean>();

/** True for a key whose value is never logged (case-insensitive, any separator style). */
export function isSecretKey(key: string): boolean {
  let secret = verdicts.get(key);
  if (secret === undefined) {
    const snake = snakeCase(key);
    secret = SECRET_KEY.test(snake) || DATA_KEY.test(snake);
    if (verdicts.size >= MAX_REMEMBERED_KEYS) verdicts.clear();
    verdicts.set(key, secret);
  }
  return secret;
}

/**
 * A copy of a log object safe to print: values under secret keys replaced at any depth, errors
 * turned into `{type, message, stack, ...their fields}` and redacted the same way. Only plain
 * objects, arrays and errors are walked; other class instances (requests, replies) are left to
 * the logger's serializers. Beyond MAX_REDACT_DEPTH or MAX_REDACT_NODES nothing more is printed.
 */
export function redactForLog(object: Record<string, unknown>): Record<string, unknown> {
  let budget = MAX_REDACT_NODES;
  const ancestors = new Set<object>();

  const entries = (source: object, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(source)) {
      if (--budget < 0) {
        out['…'] = '[truncated]';
        break;
      }
      out[key] = isSecretKey(key) && child !== undefined ? REDACTED : walk(child, depth + 1);
    }
    return out;
  };

  const walk = (item: unknown, depth: number): unknown => {
    if (item === null || typeof item !== 'object') return item;
    const walkable = item instanceof Error || Array.isArray(item) || isPlainObject(item);
    if (!walkable) return item;
    if (ancestors.has(item)) return '[circular]';
    if (depth >= MAX_REDACT_DEPTH) return '[too deep]';
    ancestors.add(item);
    try {
      if (item instanceof Error) return entries(pino.stdSerializers.err(item), depth);
      if (!Array.isArray(item)) return entries(item, depth);
      const out: unknown[] = [];
      for (const element of item) {
        if (--budget < 0) {
          out.push('[truncated]');
          break;
        }
        out.push(walk(element, depth + 1));
      }
      return out;
    } finally {
      ancestors.delete(item);
    }
  };

  ancestors.add(object);
  return entries(object, 0);
}

/**
 * A URL as a log line may show it: its user and password (`https://user:token@host/`, which
 * clients send as Basic auth) replaced by REDACTED; text that is no URL is returned as it is.
 */
export function urlForLog(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (!url.username && !url.password) return text;
  url.username = REDACTED;
  url.password = '';
  return url.toString();
}
