// The identity a gateway asserts to the server (SVC_AUTH=gateway), in one header:
//   x-svc-identity: <base64url(JSON {sub, role, exp})>.<base64url(HMAC-SHA256(first part, secret))>
// `exp` is in epoch seconds. Pure (no I/O), so the gateway and the server share it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import { isRole, type Role } from './roles.ts';

/** The request header that carries a signed identity. */
export const IDENTITY_HEADER = 'x-svc-identity';

/** A header longer than this is refused before any decoding or hashing. */
const MAX_ASSERTION_CHARS = 4096;
/**
 * The longest subject an identity may name: OpenID Connect's (Core 1.0, section 2: `sub` "MUST
 * NOT exceed 255 ASCII characters"), so every subject a provider may issue is asserted.
 */
export const MAX_SUBJECT_CHARS = 255;
const HMAC_BYTES = 32;

export type AssertedIdentity = { sub: string; role: Role; exp: number };

const claimsSchema = v.object({
  sub: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_SUBJECT_CHARS)),
  role: v.string(),
  exp: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

export type VerifiedIdentity = { ok: true; identity: AssertedIdentity } | { ok: false; reason: string };

const mac = (body: string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** The header value asserting `identity` (exp in epoch seconds), signed with the shared secret. */
export function signIdentity(identity: AssertedIdentity, secret: string): string {
  const body = Buffer.from(JSON.stringify({ sub: identity.sub, role: identity.role, exp: identity.exp })).toString('base64url');
  return `${body}.${mac(body, secret).toString('base64url')}`;
}

/**
 * Checks a header made by signIdentity: signature first (constant time), then the claims; `now`
 * in epoch seconds. Refuses (with a short reason, never the header) anything malformed, signed
 * with another secret, expired (exp <= now) or naming an unknown role.
 */
export function verifyIdentity(header: string | undefined, secret: string, now: number = Date.now() / 1000): VerifiedIdentity {
  if (typeof header !== 'string' || header.length > MAX_ASSERTION_CHARS) return { ok: false, reason: 'malformed identity assertion' };
  const dot = header.indexOf('.');
  if (dot <= 0 || dot !== header.lastIndexOf('.')) return { ok: false, reason: 'malformed identity assertion' };
  const body = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1), 'base64url');
  if (given.length !== HMAC_BYTES || !timingSafeEqual(given, mac(body, secret))) return { ok: false, reason: 'identity assertion has a bad signature' };
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed identity assertion' };
  }
  const parsed = v.safeParse(claimsSchema, claims);
  if (!parsed.success) return { ok: false, reason: 'malformed identity assertion' };
  const { sub, role, exp } = parsed.output;
  if (!isRole(role)) return { ok: false, reason: 'identity assertion names an unknown role' };
  if (exp <= now) return { ok: false, reason: 'identity assertion has expired' };
  return { ok: true, identity: { sub, role, exp } };
}
