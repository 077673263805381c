// The identity a gateway asserts to the server (SVC_AUTH=gateway), in one header:
//   x-svc-identity: <base64url(JSON {sub, role, exp, req, body})>.<base64url(HMAC-SHA256(first part, secret))>
// `exp` is in epoch seconds; `req` (`<METHOD> <request-target>`) and `body` (bodyDigest of the
// bytes sent) bind it to the one request it was made for, so an assertion read off the wire opens
// no other route, and no other body on its route (another playbook started, another credential
// written), for its 60 s; one without either is refused (the gateway always binds, so an unbound
// one was made by something else). Pure (no I/O), so the gateway and the server share it.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import { isRole, type Role } from './roles.ts';

/** The request header that carries a signed identity. */
export const IDENTITY_HEADER = 'x-svc-identity';
/**
 * The answer header a server sets, to why, when it refuses an identity assertion: the gateway
 * then knows the 401 is its own key's or clock's doing, not its caller's credential.
 */
export const IDENTITY_REFUSED_HEADER = 'x-svc-identity-refused';
/** How long an assertion holds, in seconds: one request's worth (the gateway's and the server's clocks must agree within it). */
export const ASSERTION_TTL_S = 60;

/** A header longer than this is refused before any decoding or hashing. */
const MAX_ASSERTION_CHARS = 4096;
/**
 * The longest subject an identity may name: OpenID Connect's (Core 1.0, section 2: `sub` "MUST
 * NOT exceed 255 ASCII characters"), so every subject a provider may issue is asserted.
 */
export const MAX_SUBJECT_CHARS = 255;
const HMAC_BYTES = 32;

/** `req`: the request it is for (requestOf); `body`: the digest of its body (bodyDigest). */
export type AssertedIdentity = { sub: string; role: Role; exp: number; req: string; body: string };

const claimsSchema = v.object({
  sub: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_SUBJECT_CHARS)),
  role: v.string(),
  exp: v.pipe(v.number(), v.integer(), v.minValue(0)),
  req: v.optional(v.string()),
  body: v.optional(v.string()),
});

/** The `req` of an assertion for a request: its method and request-target (path and query) as sent. */
export const requestOf = (method: string, target: string): string => `${method.toUpperCase()} ${target}`;

/** The `body` of an assertion for a request whose body is `bytes` (none: empty): SHA-256, base64url. */
export const bodyDigest = (bytes: Uint8Array | undefined): string => createHash('sha256').update(bytes ?? new Uint8Array()).digest('base64url');

export type VerifiedIdentity = { ok: true; identity: AssertedIdentity } | { ok: false; reason: string };

const mac = (body: string, secret: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** The header value asserting `identity` (exp in epoch seconds), signed with the shared secret. */
export function signIdentity(identity: AssertedIdentity, secret: string): string {
  const claims = { sub: identity.sub, role: identity.role, exp: identity.exp, req: identity.req, body: identity.body };
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(body, secret).toString('base64url')}`;
}

/**
 * Checks a header made by signIdentity for `request` (requestOf): signature first (constant time),
 * then the claims; `now` in epoch seconds. Refuses (with a short reason, never the header)
 * anything malformed, signed with another secret, expired (exp <= now), naming an unknown role,
 * bound to no request or body, or bound to another request. The body is the caller's to compare
 * (bodyDigest of what it reads) once it has read it.
 */
export function verifyIdentity(header: string | undefined, secret: string, request: string, now: number = Date.now() / 1000): VerifiedIdentity {
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
  const { sub, role, exp, req, body: digest } = parsed.output;
  if (!isRole(role)) return { ok: false, reason: 'identity assertion names an unknown role' };
  if (exp <= now) return { ok: false, reason: 'identity assertion has expired' };
  // Told apart from a malformed one: the claim the gateway sets since f4cd4751 is what is missing.
  if (req === undefined) return { ok: false, reason: 'identity assertion is bound to no request (its req claim is missing)' };
  if (digest === undefined) return { ok: false, reason: 'identity assertion is bound to no request body (its body claim is missing)' };
  if (req !== request) return { ok: false, reason: 'identity assertion was made for another request' };
  return { ok: true, identity: { sub, role, exp, req, body: digest } };
}
