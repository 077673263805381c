// API tokens (SVC_AUTH=token): random, shown once, stored only as a hash.
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_BYTES = 32;
// `svc_` and 43 base64url characters (32 bytes): anything else is refused without a lookup.
const API_TOKEN_PATTERN = /^svc_[A-Za-z0-9_-]{43}$/;
// Shown in listings to tell tokens apart: the fixed `svc_` and 8 characters (48 of 256 bits).
const DISPLAY_PREFIX_CHARS = 12;

export type NewApiToken = { token: string; hash: string; prefix: string };

/**
 * The stored form of a token. SHA-256 without salt or stretching is enough here: a token holds 256
 * random bits (no dictionary to try), and a fast hash lets the server check one per request.
 */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh token, its hash (the only form stored) and its display prefix. */
export function newApiToken(): NewApiToken {
  const token = `svc_${randomBytes(TOKEN_BYTES).toString('base64url')}`;
  return { token, hash: hashApiToken(token), prefix: token.slice(0, DISPLAY_PREFIX_CHARS) };
}

/** True when `text` has the shape of a token newApiToken makes (cheap; checked before any lookup). */
export function looksLikeApiToken(text: string): boolean {
  return API_TOKEN_PATTERN.test(text);
}
