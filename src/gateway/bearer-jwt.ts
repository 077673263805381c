// Bearer JWTs of programs: verified with the provider's JWKS (jose), never trusted unverified.
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { MAX_SUBJECT_CHARS } from '../auth/identity-assertion.ts';

/** Clock skew allowed on `exp`/`nbf`/`iat`, in seconds. */
export const JWT_CLOCK_TOLERANCE_S = 30;

/** `clientId`: the gateway's own client at the provider, whose logins' tokens are no program's (issuedToGateway). */
export type JwtCheck = { issuer: string; audience: string; algorithms: string[]; keys: JWTVerifyGetKey; clientId: string };

/**
 * True for a token the provider issued to the gateway's own client at a person's login: its ID
 * token (its `aud` names the client, and it carries the `nonce` the gateway sends with every
 * login) or the access token the login got (`azp`, or RFC 9068's `client_id`, is the client).
 * Neither is a program's credential: the access token never leaves the gateway, and the ID token
 * reaches the browser at logout (`id_token_hint`), so taken as a bearer it opened the API as the
 * person who had just logged out (the default audience is the client id, every ID token's `aud`).
 */
function issuedToGateway(payload: JWTPayload, clientId: string): boolean {
  if (payload.azp === clientId || payload.client_id === clientId) return true;
  const audiences = payload.aud === undefined ? [] : [payload.aud].flat();
  return payload.nonce !== undefined && audiences.includes(clientId);
}

export type JwtVerdict = { ok: true; claims: JWTPayload & { sub: string } } | { ok: false; reason: string };

/** True when `text` has the three-part shape of a JWS compact serialisation. */
export function looksLikeJwt(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(text);
}

/**
 * Verifies a JWT: signature by a key of the JWKS with an allow-listed (asymmetric) algorithm, `iss`,
 * `aud`, `exp`/`nbf`/`iat` with JWT_CLOCK_TOLERANCE_S, a `sub`, and that it is no token of the
 * gateway's own login (issuedToGateway). The reason on refusal is short and
 * never holds the token. Throws KeysUnavailable (from `check.keys`) when the keys cannot be fetched.
 */
export async function verifyBearerJwt(token: string, check: JwtCheck): Promise<JwtVerdict> {
  try {
    const { payload } = await jwtVerify(token, check.keys, {
      issuer: check.issuer,
      audience: check.audience,
      algorithms: check.algorithms,
      clockTolerance: JWT_CLOCK_TOLERANCE_S,
      requiredClaims: ['exp', 'sub'],
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') return { ok: false, reason: 'the token has no subject' };
    // jose judges `iat` only with maxTokenAge; a token issued in the future is a provider's clock
    // gone wrong or a token minted ahead to outlive a key's rotation: refused, as `nbf` would be.
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + JWT_CLOCK_TOLERANCE_S) {
      return { ok: false, reason: 'the token\'s iat claim is in the future (check the provider\'s clock)' };
    }
    if (issuedToGateway(payload, check.clientId)) return { ok: false, reason: 'the token was issued to this gateway\'s login (an ID token is not an access token): send a program\'s access token or an API token' };
    // The server takes no longer one in an identity assertion: refused here, saying why.
    if (payload.sub.length > MAX_SUBJECT_CHARS) return { ok: false, reason: `the token's subject is longer than ${MAX_SUBJECT_CHARS} characters (OpenID Connect's limit)` };
    return { ok: true, claims: { ...payload, sub: payload.sub } };
  } catch (err) {
    if (err instanceof errors.JWTExpired) return { ok: false, reason: 'the token has expired' };
    if (err instanceof errors.JWTClaimValidationFailed) return { ok: false, reason: `the token's ${err.claim} claim is not accepted` };
    if (err instanceof errors.JOSEAlgNotAllowed) return { ok: false, reason: 'the token\'s signing algorithm is not accepted' };
    if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWSSignatureVerificationFailed) return { ok: false, reason: 'the token\'s signature does not verify' };
    if (err instanceof errors.JOSEError) return { ok: false, reason: 'the token is not a valid JWT' };
    throw err;
  }
}

/**
 * How long a verified token is remembered at most, in ms. With the key set's own age
 * (JWKS_MAX_AGE_MS, identity-provider.ts) it bounds how long a key removed from the JWKS still
 * counts: the two add up to a minute.
 */
export const VERIFIED_JWT_CACHE_MS = 30_000;

/**
 * The provider's key set could not be fetched (unreachable, timed out, or not answering 200): no
 * verdict on the token, which may well be good; the caller is told to try again (503).
 */
export class KeysUnavailable extends Error {
  override name = 'KeysUnavailable';
}
const MAX_CACHED_JWTS = 10_000;

/**
 * Remembers tokens that verified (in memory only), until their `exp` or VERIFIED_JWT_CACHE_MS,
 * whichever is sooner: a program sends the same token many times, and a signature check costs
 * more than the rest of a proxied request. Refusals are not remembered.
 */
export class VerifiedJwtCache {
  readonly #entries = new Map<string, { claims: JWTPayload & { sub: string }; until: number }>();
  readonly #now: () => number;

  // Date.now read at each call (not kept), so the clock is the one jose judges the key set's age by.
  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  /** The verdict for `token`: remembered, or verified now by `check`. */
  async verify(token: string, check: JwtCheck): Promise<JwtVerdict> {
    const t = this.#now();
    const hit = this.#entries.get(token);
    if (hit && hit.until > t) return { ok: true, claims: hit.claims };
    if (hit) this.#entries.delete(token);
    const verdict = await verifyBearerJwt(token, check);
    if (verdict.ok) {
      const oldest = this.#entries.keys().next();
      if (this.#entries.size >= MAX_CACHED_JWTS && !oldest.done) this.#entries.delete(oldest.value);
      const exp = typeof verdict.claims.exp === 'number' ? verdict.claims.exp * 1000 : t;
      this.#entries.set(token, { claims: verdict.claims, until: Math.min(exp, t + VERIFIED_JWT_CACHE_MS) });
    }
    return verdict;
  }
}
