// Who is calling the gateway: a session cookie (people), a bearer JWT from the provider or the
// server's own API token (programs), or no one.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { looksLikeApiToken } from '../auth/api-token.ts';
import type { Role } from '../auth/roles.ts';
import { ServiceError } from '../errors.ts';
import { KeysUnavailable, looksLikeJwt, type VerifiedJwtCache } from './bearer-jwt.ts';
import { roleFromClaims } from './claims-role.ts';
import { pathPatterns } from './playbook-paths.ts';
import type { IdentityProvider } from './identity-provider.ts';
import type { Session, SessionStore } from './session-store.ts';

export type Caller =
  | { kind: 'anonymous' }
  /** A credential was sent and refused; `reason` is safe to show. */
  | { kind: 'refused'; reason: string }
  /** The server's API token: passed through, the server checks it and its role. `key` is a digest, for logs and limits. */
  | { kind: 'api-token'; key: string }
  /** `exp`: the token's expiry, epoch seconds (a stream opened with it ends then). */
  | { kind: 'jwt'; sub: string; role: Role | null; name: string | null; email: string | null; paths: string[] | null; exp: number }
  | { kind: 'session'; sid: string; sub: string; role: Role | null; paths: string[] | null; session: Session };

const BEARER = 'bearer ';

/** The token of an `Authorization: Bearer` header, else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length <= BEARER.length || header.slice(0, BEARER.length).toLowerCase() !== BEARER) return undefined;
  return header.slice(BEARER.length).trim();
}

/** A short digest naming a credential in logs and rate limits without revealing it. */
export const credentialKey = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 16);

/** Who a log line or a limit names the caller as. */
export function callerLabel(c: Caller): string {
  switch (c.kind) {
    case 'api-token':
      return `api-token#${c.key}`;
    case 'jwt':
      return `jwt:${c.sub}`;
    case 'session':
      return `session:${c.sub}`;
    default:
      return 'anonymous';
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The caller of `req`: a bearer credential wins over a session cookie (a program's request
 * carries no ambient browser credential). `sessionId` is the session cookie's value.
 */
export async function resolveCaller(
  req: FastifyRequest,
  sessionId: string | undefined,
  provider: IdentityProvider | null,
  sessions: SessionStore | null,
  jwts: VerifiedJwtCache,
): Promise<Caller> {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const token = bearerToken(header);
    if (token === undefined) return { kind: 'refused', reason: 'the Authorization header is not a Bearer token' };
    if (looksLikeApiToken(token)) return { kind: 'api-token', key: credentialKey(token) };
    if (!looksLikeJwt(token)) return { kind: 'refused', reason: 'the bearer token is neither a JWT nor an API token' };
    const loaded = provider?.loaded;
    if (!provider || !loaded) return { kind: 'refused', reason: provider ? 'the identity provider is not reachable yet' : 'no identity provider is configured; use an API token' };
    const s = provider.settings;
    const verdict = await jwts.verify(token, { issuer: loaded.issuer, audience: s.audience, algorithms: s.algorithms, keys: loaded.keys, clientId: s.clientId }).catch((err: unknown) => {
      // No verdict on the token: the provider's keys could not be had. Try again, not log in again.
      if (err instanceof KeysUnavailable) throw new ServiceError('provider_unavailable', `${err.message}; try again shortly`, { cause: err });
      throw err;
    });
    if (!verdict.ok) return { kind: 'refused', reason: verdict.reason };
    const claims = verdict.claims as Record<string, unknown>;
    return {
      kind: 'jwt',
      sub: verdict.claims.sub,
      role: roleFromClaims(claims, s.rolesClaim, s.roleMap),
      name: str(claims.name),
      email: str(claims.email),
      paths: pathPatterns(claims, s.pathsClaim),
      // verifyBearerJwt requires it; a token without one could not have passed.
      exp: typeof verdict.claims.exp === 'number' ? verdict.claims.exp : 0,
    };
  }
  const session = await sessions?.touch(sessionId);
  if (session && sessionId) return { kind: 'session', sid: sessionId, sub: session.sub, role: session.role, paths: session.paths, session };
  return { kind: 'anonymous' };
}
