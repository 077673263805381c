// Who calls, and may they: one onRequest hook for every route, before the body is read. Each route
// declares its access (`config: { access }`, src/api/access.ts); one without is refused.
import { createHash, timingSafeEqual } from 'node:crypto';
import { pipeline, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { watchForLapse } from '../abortable-wait.ts';
import { looksLikeApiToken } from '../auth/api-token.ts';
import type { Identity } from '../auth/identity.ts';
import { bodyDigest, IDENTITY_HEADER, IDENTITY_REFUSED_HEADER, requestOf, verifyIdentity } from '../auth/identity-assertion.ts';
import { roleAtLeast } from '../auth/roles.ts';
import type { Config } from '../config.ts';
import { browserFromElsewhere } from '../auth/browser-from-elsewhere.ts';
import { isDatabaseUnavailable } from '../db/classify-database-error.ts';
import type { Queryable } from '../db/queryable.ts';
import { liveApiTokenHashes } from '../db/api-token.repo.ts';
import { ServiceError } from '../errors.ts';
import type { RouteAccess } from './access.ts';
import { ApiTokenCache } from './api-token-cache.ts';
import { FailedTokenLimit } from './failed-token-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by the auth hook on every route that is not public. */
    identity: Identity | null;
    /** The body digest a gateway's assertion was signed for, and of the body read (bodyDigest); null: none. */
    assertedBody: string | null;
    readBody: string | null;
  }
  interface FastifyInstance {
    /**
     * Why the caller `req` was let in as may no longer be served (its API token revoked, past its
     * expiry, or of a role the route no longer admits), or undefined while it may; see watchCaller.
     */
    callerLapse(req: FastifyRequest): Promise<string | undefined>;
  }
}

/**
 * How often a long-lived answer (the inspection WebSocket, a batch's event stream) checks its
 * caller again; a token lookup is trusted API_TOKEN_CACHE_TTL_MS, so a revoked token's stream ends
 * within that and this (an expired one's within this: the lookup ends at the expiry).
 */
export const STREAM_CALLER_CHECK_MS = 1_000;

/** What the auth hook needs: the mode and secrets from config, the resolved worker token, tokens' table. */
export type AuthDeps = { config: Config; db: Queryable; workerToken: string };

const LOCAL: Identity = Object.freeze({ sub: 'local', role: 'admin', via: 'local' });
const WORKER: Identity = Object.freeze({ sub: 'worker', role: null, via: 'worker' });
const BEARER = 'bearer ';

/** The token of an `Authorization: Bearer <token>` header (scheme in any case), else undefined. */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length <= BEARER.length || header.slice(0, BEARER.length).toLowerCase() !== BEARER) return undefined;
  return header.slice(BEARER.length).trim();
}

// 401 carries the challenge (RFC 6750); `invalid_token` when a credential was sent and refused.
function unauthorized(reply: FastifyReply, detail: string, sentOne: boolean): ServiceError {
  reply.header('www-authenticate', sentOne ? 'Bearer error="invalid_token"' : 'Bearer');
  return new ServiceError('unauthorized', detail);
}

// A refused assertion is its gateway's to fix (its key or its clock), which the header tells it.
function assertionRefused(reply: FastifyReply, reason: string): ServiceError {
  reply.header(IDENTITY_REFUSED_HEADER, reason);
  return unauthorized(reply, reason, true);
}

const forbidden = (needed: string, who: Identity): ServiceError =>
  new ServiceError('forbidden', `this needs role ${needed}; the caller (${who.via} ${who.sub}) has ${who.role ?? 'no role (worker token)'}`);

/** True when `identity` passes `access` (a role at least the level, or the worker token where it is let in). */
function allows(identity: Identity, access: RouteAccess): boolean {
  if (identity.via === 'worker') return access.level === 'worker' || access.worker === true;
  return access.level !== 'worker' && (access.level === 'public' || (identity.role !== null && roleAtLeast(identity.role, access.level)));
}

/**
 * For a check that depends on the request beyond its route (`include_data=true`): throws 403 (401
 * without a caller) unless the caller passes `access`.
 */
export function requireAccess(req: FastifyRequest, access: RouteAccess): void {
  const who = req.identity;
  if (!who) throw new ServiceError('unauthorized', 'no caller identity on this request');
  if (!allows(who, access)) throw forbidden(access.level, who);
}

/**
 * Installs the auth hook (call before any route is registered). Worker routes take only the
 * worker token, compared in constant time against bytes made once here: no lookup, no I/O, at
 * worker report rates. Other routes by SVC_AUTH: `none` lets everyone in as a local admin (the
 * server then listens on loopback only, see checkServerAuth) but a browser's request for another
 * site (browserFromElsewhere); `token` wants an API token;
 * `gateway` an identity the gateway signed, or an API token (programs the gateway passes through
 * keep their own credential, checked here where the hashes are).
 */
export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  const workerToken = Buffer.from(deps.workerToken);
  const isWorkerToken = (header: string | undefined): boolean => {
    const token = bearerToken(header);
    if (token === undefined || token.length !== deps.workerToken.length) return false;
    const given = Buffer.from(token);
    return given.length === workerToken.length && timingSafeEqual(given, workerToken);
  };
  const mode = deps.config.SVC_AUTH;
  const gatewaySecret = deps.config.SVC_GATEWAY_SECRET ?? '';
  const tokens = new ApiTokenCache(deps.db);

  const checkToken = async (header: string | undefined, token: string | undefined, reply: FastifyReply): Promise<Identity> => {
    if (token === undefined) {
      const wanted = mode === 'gateway' ? `an identity asserted by the gateway (${IDENTITY_HEADER}) or an API token` : 'an API token (Authorization: Bearer <token>)';
      throw unauthorized(reply, `authentication required: ${wanted}`, header !== undefined);
    }
    const answer = looksLikeApiToken(token) ? await tokens.lookup(token) : undefined;
    if (!answer) throw unauthorized(reply, 'the API token is unknown or revoked', true);
    // Refused as a revoked token is; saying it expired only tells its holder about that token.
    if ('expiredAt' in answer) throw unauthorized(reply, `the API token expired at ${answer.expiredAt.toISOString()}`, true);
    return answer.identity;
  };

  const failures = mode === 'token' ? new FailedTokenLimit(deps.config.SVC_AUTH_FAILURES_PER_MINUTE, () => liveApiTokenHashes(deps.db)) : undefined;

  // In token mode a credential refused (401) counts against its source address, and an address
  // past the limit is refused before any lookup (429), but for a live token (FailedTokenLimit).
  const fromToken = async (req: FastifyRequest, reply: FastifyReply): Promise<Identity> => {
    const header = req.headers.authorization;
    const token = bearerToken(header);
    if (!failures || header === undefined) return checkToken(header, token, reply);
    const admitted = await failures.admit(req.ip, token);
    if (!admitted.ok) {
      reply.header('retry-after', String(admitted.retryAfterSeconds));
      throw new ServiceError('too_many_requests', `too many refused credentials from this address: try again in ${admitted.retryAfterSeconds} s`);
    }
    try {
      const identity = await checkToken(header, token, reply);
      failures.record(req.ip, token, true);
      return identity;
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'unauthorized') failures.record(req.ip, token, false);
      throw err;
    }
  };

  const authenticate = async (req: FastifyRequest, reply: FastifyReply): Promise<Identity> => {
    if (mode === 'gateway') {
      const asserted = req.headers[IDENTITY_HEADER];
      if (asserted !== undefined) {
        const verified = verifyIdentity(Array.isArray(asserted) ? undefined : asserted, gatewaySecret, requestOf(req.method, req.raw.url ?? req.url));
        if (!verified.ok) throw assertionRefused(reply, verified.reason);
        req.assertedBody = verified.identity.body;
        return Object.freeze({ sub: verified.identity.sub, role: verified.identity.role, via: 'gateway' });
      }
    }
    return fromToken(req, reply);
  };

  app.decorate('callerLapse', async (req: FastifyRequest): Promise<string | undefined> => {
    // Only an API token lapses here. The worker token and `none` do not; a gateway's identity is
    // the gateway's to police: its assertion's 60 s are the handshake's, not the stream's.
    if (req.identity?.via !== 'token') return undefined;
    const token = bearerToken(req.headers.authorization);
    const answer = token === undefined ? undefined : await tokens.lookup(token);
    if (!answer) return 'the API token is unknown or revoked';
    if ('expiredAt' in answer) return `the API token expired at ${answer.expiredAt.toISOString()}`;
    const access = req.routeOptions.config.access;
    return access && !allows(answer.identity, access) ? `the API token's role ${answer.identity.role ?? 'none'} no longer admits this` : undefined;
  });
  app.decorateRequest('identity', null);
  app.decorateRequest('assertedBody', null);
  app.decorateRequest('readBody', null);
  // A gateway's assertion names the body it was signed for: the bytes read are hashed on their way
  // to the parser, and compared before validation (an assertion read off the wire then starts no
  // other playbook and writes no other credential on its route). No body read is the empty one.
  app.addHook('preParsing', async (req, _reply, payload) => {
    if (req.assertedBody === null) return payload;
    const hash = createHash('sha256');
    const hashed = new Transform({
      transform(chunk: Buffer, _encoding, next) {
        hash.update(chunk);
        next(null, chunk);
      },
      flush(next) {
        req.readBody = hash.digest('base64url');
        next();
      },
    });
    // The parser's stream fails when the client's does (a body cut short is never taken).
    return pipeline(payload, hashed, () => {});
  });
  app.addHook('preValidation', async (req, reply) => {
    if (req.assertedBody !== null && (req.readBody ?? bodyDigest(undefined)) !== req.assertedBody) {
      throw assertionRefused(reply, 'identity assertion was made for another request body');
    }
  });
  // Callback style: the worker path (every claim and report) then allocates no promise.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.is404) return done(); // the not-found handler answers; nothing to protect
    const access = req.routeOptions.config.access;
    if (!access) return done(new ServiceError('forbidden', 'this route declares no access, so no caller is let in'));
    if (access.level === 'public') return done();
    if ((access.level === 'worker' || access.worker) && isWorkerToken(req.headers.authorization)) {
      req.identity = WORKER;
      return done();
    }
    if (access.level === 'worker') {
      return done(unauthorized(reply, 'this route takes only the worker token (Authorization: Bearer <SVC_WORKER_TOKEN>)', req.headers.authorization !== undefined));
    }
    if (mode === 'none') {
      const refused = browserFromElsewhere(req.headers, 'SVC_AUTH=none');
      if (refused) return done(new ServiceError('forbidden', refused));
      req.identity = LOCAL;
      return done();
    }
    authenticate(req, reply).then((identity) => {
      if (!allows(identity, access)) return done(forbidden(access.level, identity));
      req.identity = identity;
      done();
    }, done);
  });
}

/**
 * Checks the caller of a long-lived answer every STREAM_CALLER_CHECK_MS until `signal` aborts (the
 * client left, the answer ended): resolves with why it may no longer be served (the stream then
 * ends), or undefined once `signal` aborted. A check the database cannot answer is asked again at
 * the next (a token cannot be revoked meanwhile either); a caller that cannot lapse costs no timer.
 */
export async function watchCaller(app: FastifyInstance, req: FastifyRequest, signal: AbortSignal): Promise<string | undefined> {
  if (req.identity?.via !== 'token') return undefined;
  return watchForLapse(() => app.callerLapse(req), () => STREAM_CALLER_CHECK_MS, isDatabaseUnavailable, signal);
}
