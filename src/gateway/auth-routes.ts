// People's login through the OpenID provider: authorization-code flow with PKCE (openid-client),
// a server-side session behind an HttpOnly cookie, logout that ends it here and at the provider.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { MAX_SUBJECT_CHARS } from '../auth/identity-assertion.ts';
import type { Role } from '../auth/roles.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { audit } from './audit.ts';
import type { Caller } from './caller.ts';
import { roleFromClaims } from './claims-role.ts';
import { pathPatterns } from './playbook-paths.ts';
import { CALLBACK_PATH, clearLoginCookie, clearSessionCookie, loginCookieName, sessionIdOf, setLoginCookie, setSessionCookie } from './cookies.ts';
import type { IdentityProvider, LoadedProvider } from './identity-provider.ts';
import { cookiesKept, type OidcSettings } from './settings.ts';
import type { SessionStore } from './session-store.ts';

export type AuthRouteDeps = {
  provider: IdentityProvider | null;
  /** Null without a provider (no one logs in). */
  sessions: SessionStore | null;
  sessionMaxMs: number;
  log: Logger;
  /** Where audit lines go (auditLogger). */
  auditLog: Logger;
  /** The public origin the request came in on. */
  originOf(req: FastifyRequest): string;
};

// An origin no request has: a return address resolved against it must keep it.
const RETURN_BASE = 'http://return-to.invalid';

/**
 * A return address after login: a path on this gateway only (no open redirect), or `/`. It is
 * read as a browser reads a Location (tabs and newlines dropped, `\` as `/`, so `/\t/evil` is
 * `//evil`) and must stay on this origin; what is sent is that reading, percent-encoded (a
 * Location header takes no control or non-Latin-1 character).
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/')) return '/';
  let url: URL;
  try {
    url = new URL(value, RETURN_BASE);
  } catch {
    return '/';
  }
  // Dot segments resolved can leave `//` in front (`/..//evil`): that is another host to a browser.
  const path = url.pathname + url.search + url.hash;
  return url.origin === RETURN_BASE && !path.startsWith('//') ? path : '/';
}

/** `/auth/me`'s answer for a caller. */
export function meOf(c: Caller): { sub: string; name: string | null; email: string | null; roles: Role[] } | undefined {
  if (c.kind === 'session') return { sub: c.sub, name: c.session.name, email: c.session.email, roles: c.role ? [c.role] : [] };
  if (c.kind === 'jwt') return { sub: c.sub, name: c.name, email: c.email, roles: c.role ? [c.role] : [] };
  return undefined;
}

/** The discovered provider and the sessions of the people who log in through it. */
function loginOrThrow(deps: AuthRouteDeps): { loaded: LoadedProvider; settings: OidcSettings; sessions: SessionStore } {
  const { provider, sessions } = deps;
  if (!provider || !sessions) throw new ServiceError('not_found', 'no OpenID provider is configured (SVC_OIDC_ISSUER): people cannot log in here; programs use an API token');
  if (!provider.loaded) throw new ServiceError('provider_unavailable');
  return { loaded: provider.loaded, settings: provider.settings, sessions };
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The most of a provider's error description a refusal quotes. */
const MAX_DESCRIPTION_CHARS = 200;

/**
 * Why a login failed: the provider's own error and description when it sent one (at the
 * redirect back, or from the token endpoint), which openid-client's message alone does not say
 * ('authorization response from the server is an error'); else that message.
 */
function loginFailure(err: unknown): string {
  if (err instanceof client.AuthorizationResponseError || err instanceof client.ResponseBodyError) {
    const description = err.error_description?.slice(0, MAX_DESCRIPTION_CHARS);
    return `the identity provider answered ${err.error}${description ? ` (${description})` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Registers /auth/login, /auth/callback, /auth/logout and /auth/me (gate: `login`, `me`). */
export function registerAuthRoutes(app: FastifyInstance, deps: AuthRouteDeps): void {
  const { log } = deps;

  app.get('/auth/login', { config: { gate: 'login' } }, async (req, reply) => {
    const { loaded, settings: s, sessions } = loginOrThrow(deps);
    const origin = deps.originOf(req);
    // An origin taken from the request (no GATEWAY_PUBLIC_URL; the start refuses a plain-http one
    // there): its cookies would be Secure, which a browser drops from plain http, and the person
    // would sign in at the provider only to be told at the callback that no login is in progress.
    if (!cookiesKept(origin)) {
      throw new ServiceError('bad_request', `people log in only over https (http only on loopback): a browser keeps no Secure cookie from ${origin}, and the login's and the session's are Secure; reach the gateway by https (behind a proxy that ends TLS: GATEWAY_PUBLIC_URL, or SVC_GATEWAY_TRUSTED_PROXIES so that its X-Forwarded-Proto counts)`);
    }
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const returnTo = safeReturnTo((req.query as Record<string, unknown>).return_to);
    const url = client.buildAuthorizationUrl(loaded.config, {
      redirect_uri: origin + CALLBACK_PATH,
      scope: s.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    setLoginCookie(reply, origin, await sessions.beginLogin({ codeVerifier, state, nonce, returnTo, origin }));
    return reply.redirect(url.href, 302);
  });

  app.get(CALLBACK_PATH, { config: { gate: 'login' } }, async (req, reply) => {
    const { loaded, settings: s, sessions } = loginOrThrow(deps);
    const origin = deps.originOf(req);
    const pending = await sessions.takeLogin(req.cookies[loginCookieName(origin)]);
    clearLoginCookie(reply, origin);
    if (!pending || pending.origin !== origin) throw new ServiceError('bad_request', 'no login in progress here (it expired, or cookies are off): start again at /auth/login');
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(loaded.config, new URL(req.url, origin), {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      const why = loginFailure(err);
      log.warn({ cause: why }, 'gateway: login failed');
      audit(deps.auditLog, req, reply.code(401), 'anonymous', true);
      throw new ServiceError('unauthorized', `login failed: ${why}; start again at /auth/login`);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new ServiceError('unauthorized', 'login failed: the provider returned no ID token');
    // The server takes no longer subject in an identity assertion: every request would be a 401.
    if (idClaims.sub.length > MAX_SUBJECT_CHARS) throw new ServiceError('unauthorized', `login failed: the subject is longer than ${MAX_SUBJECT_CHARS} characters (OpenID Connect's limit)`);
    let claims: Record<string, unknown> = { ...idClaims };
    // Roles (and names) may be only in the userinfo answer, as many providers keep ID tokens small.
    if (loaded.config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      try {
        claims = { ...(await client.fetchUserInfo(loaded.config, tokens.access_token, idClaims.sub)), ...claims };
      } catch (err) {
        log.warn({ cause: err instanceof Error ? err.message : String(err) }, 'gateway: userinfo failed; using the ID token alone');
      }
    }
    const role = roleFromClaims(claims, s.rolesClaim, s.roleMap);
    // The session this browser held before (another person's on a shared machine, or the same
    // person's): its cookie is replaced below, and its row must not outlive it, usable by whoever
    // kept a copy of the old value until it expired. A new id is made in any case (no fixation).
    await sessions.end(sessionIdOf(req, origin));
    const id = await sessions.create({
      sub: idClaims.sub,
      name: str(claims.name),
      email: str(claims.email),
      role,
      paths: pathPatterns(claims, s.pathsClaim),
      idToken: tokens.id_token,
    });
    setSessionCookie(reply, origin, id, deps.sessionMaxMs);
    reply.redirect(pending.returnTo, 302);
    audit(deps.auditLog, req, reply, `session:${idClaims.sub}`, true);
    return reply;
  });

  const logout = async (req: FastifyRequest, reply: FastifyReply) => {
    const origin = deps.originOf(req);
    const ended = await deps.sessions?.end(sessionIdOf(req, origin));
    clearSessionCookie(reply, origin);
    let next = origin + '/';
    const loaded = deps.provider?.loaded;
    if (loaded?.config.serverMetadata().end_session_endpoint) {
      const params: Record<string, string> = { post_logout_redirect_uri: origin + '/', client_id: deps.provider!.settings.clientId };
      if (ended?.idToken) params.id_token_hint = ended.idToken;
      next = client.buildEndSessionUrl(loaded.config, params).href;
    }
    audit(deps.auditLog, req, reply, ended ? `session:${ended.sub}` : 'anonymous', true);
    // A navigation (GET) is sent on to the provider; a script (POST) is told where to go.
    if (req.method === 'GET') return reply.redirect(next, 302);
    return reply.send({ logged_out: ended !== undefined, redirect: next });
  };
  // Ending the session is a change of state even by GET: another site may not send a browser here
  // to log its person out, so the GET is held to the CSRF rule (the browser's Sec-Fetch-Site says
  // same-origin, or its Origin or Referer is ours) and the console signs out by POST.
  app.get('/auth/logout', { config: { gate: 'login', changesState: true } }, logout);
  app.post('/auth/logout', { config: { gate: 'login' } }, logout);

  app.get('/auth/me', { config: { gate: 'me' } }, async (req, reply) => {
    const me = req.caller ? meOf(req.caller) : undefined;
    if (me) return me;
    reply.header('www-authenticate', 'Bearer');
    throw new ServiceError('unauthorized', 'not logged in: log in at /auth/login, or send a bearer JWT');
  });
}
