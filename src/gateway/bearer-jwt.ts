// Bearer JWTs of programs: verified with the provider's JWKS (jose), never trusted unverified.
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** Clock skew allowed on `exp`/`nbf`/`iat`, in seconds. */
export const JWT_CLOCK_TOLERANCE_S = 30;

export type JwtCheck = { issuer: string; audience: string; algorithms: string[]; keys: JWTVerifyGetKey };

export type JwtVerdict = { ok: true; claims: JWTPayload & { sub: string } } | { ok: false; reason: string };

/** True when `text` has the three-part shape of a JWS compact serialisation. */
export function looksLikeJwt(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(text);
}

/**
 * Verifies a JWT: signature by a key of the JWKS with an allow-listed (asymmetric) algorithm, `iss`,
 * `aud`, `exp`/`nbf` with JWT_CLOCK_TOLERANCE_S, and a `sub`. The reason on refusal is short and
 * never holds the token.
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
