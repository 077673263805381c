// The gateway's cookies: the session (a random id, HttpOnly, SameSite=Lax, host-only) and the
// short-lived one of a login in progress. Secure everywhere but a plain-http loopback origin,
// where the session cookie also loses its `__Host-` prefix (browsers require Secure for it).
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_TTL_MS } from './session-store.ts';
import { cookiesSecure } from './settings.ts';

const SESSION = 'svc_session';
const LOGIN = 'svc_login';
export const CALLBACK_PATH = '/auth/callback';

/** The session cookie's name for a public origin. */
export const sessionCookieName = (origin: string): string => (cookiesSecure(origin) ? `__Host-${SESSION}` : SESSION);
export const loginCookieName = (origin: string): string => (cookiesSecure(origin) ? `__Secure-${LOGIN}` : LOGIN);

const base = (origin: string): CookieSerializeOptions => ({ httpOnly: true, secure: cookiesSecure(origin), sameSite: 'lax' });

/** The session id the request carries for `origin`, if any. */
export const sessionIdOf = (req: FastifyRequest, origin: string): string | undefined => req.cookies[sessionCookieName(origin)];

/** Sets the session cookie; it lives as long as the session may (the store decides expiry). */
export function setSessionCookie(reply: FastifyReply, origin: string, id: string, maxAgeMs: number): void {
  reply.setCookie(sessionCookieName(origin), id, { ...base(origin), path: '/', maxAge: Math.floor(maxAgeMs / 1000) });
}

export function clearSessionCookie(reply: FastifyReply, origin: string): void {
  reply.clearCookie(sessionCookieName(origin), { ...base(origin), path: '/' });
}

export function setLoginCookie(reply: FastifyReply, origin: string, id: string): void {
  reply.setCookie(loginCookieName(origin), id, { ...base(origin), path: CALLBACK_PATH, maxAge: Math.floor(LOGIN_TTL_MS / 1000) });
}

export function clearLoginCookie(reply: FastifyReply, origin: string): void {
  reply.clearCookie(loginCookieName(origin), { ...base(origin), path: CALLBACK_PATH });
}
