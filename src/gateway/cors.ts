// CORS for the GUI's origins, and the CSRF rule for cookie-authenticated requests: pure helpers
// the gateway's request hook applies.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a browser may cache a preflight answer, in seconds. */
export const PREFLIGHT_MAX_AGE_S = 600;
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True for methods that change nothing (no CSRF check, no audit line). */
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method);

/** True for a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
export function isPreflight(req: FastifyRequest): boolean {
  return req.method === 'OPTIONS' && typeof req.headers.origin === 'string' && typeof req.headers['access-control-request-method'] === 'string';
}

/**
 * Adds the CORS answer headers when the request's Origin is allowed: the origin itself (never
 * `*`, since credentials are allowed) and `Vary: Origin`. Returns whether it was allowed.
 */
export function applyCors(req: FastifyRequest, reply: FastifyReply, allowed: ReadonlySet<string>): boolean {
  reply.header('vary', 'Origin');
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !allowed.has(origin)) return false;
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-allow-credentials', 'true');
  if (isPreflight(req)) {
    reply.header('access-control-allow-methods', ALLOWED_METHODS);
    const asked = req.headers['access-control-request-headers'];
    if (typeof asked === 'string') reply.header('access-control-allow-headers', asked);
    reply.header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S));
  }
  return true;
}

/**
 * Where a request says it comes from: its Origin, else the origin of its Referer, else undefined
 * (a browser sends at least one of them on a cross-site state-changing request).
 */
export function requestOrigin(req: FastifyRequest): string | undefined {
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') return origin;
  const referer = req.headers.referer;
  if (typeof referer !== 'string') return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/**
 * The CSRF rule: a cookie-authenticated request that changes state must come from the gateway's
 * own origin or an allowed one. A WebSocket handshake counts as one (a GET that opens a channel
 * any page could open with the browser's cookies). Returns a refusal detail, or undefined when it
 * passes.
 */
export function csrfRefusal(req: FastifyRequest, ownOrigin: string, allowed: ReadonlySet<string>): string | undefined {
  if (isSafeMethod(req.method) && req.headers.upgrade === undefined) return undefined;
  const from = requestOrigin(req);
  if (from === undefined) return 'a state-changing request with a session cookie must carry Origin (or Referer)';
  if (from === ownOrigin || allowed.has(from)) return undefined;
  return `origin ${from} may not make state-changing requests with a session cookie`;
}
