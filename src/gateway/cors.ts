// CORS for the GUI's origins, and the CSRF rule for cookie-authenticated requests: pure helpers
// the gateway's request hook applies.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a browser may cache a preflight answer, in seconds. */
export const PREFLIGHT_MAX_AGE_S = 600;
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// Answer headers a page on an allowed origin reads beyond CORS's safelisted ones: when to try again
// (429, 503), where a created thing is (201, 202), and that an answer repeats a first one.
const EXPOSED_HEADERS = 'Retry-After, Location, Idempotent-Replayed';

/** True for methods that change nothing (no CSRF check, no audit line). */
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method);

/** True for a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
export function isPreflight(req: FastifyRequest): boolean {
  return req.method === 'OPTIONS' && typeof req.headers.origin === 'string' && typeof req.headers['access-control-request-method'] === 'string';
}

/**
 * Adds the CORS answer headers when the request's Origin is allowed: the origin itself (never
 * `*`, since credentials are allowed), the headers its script may read, and `Vary: Origin`.
 * Returns whether it was allowed.
 */
export function applyCors(req: FastifyRequest, reply: FastifyReply, allowed: ReadonlySet<string>): boolean {
  reply.header('vary', 'Origin');
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !allowed.has(origin)) return false;
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-allow-credentials', 'true');
  if (!isPreflight(req)) reply.header('access-control-expose-headers', EXPOSED_HEADERS);
  else {
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
 * Where the browser says a request was made: Sec-Fetch-Site, which no page's script can set
 * (`same-origin`, `same-site`, `cross-site`, or `none` for a person's own navigation: the address
 * bar, a bookmark). Undefined from a client that does not send it (old browsers, programs).
 */
function fetchSite(req: FastifyRequest): string | undefined {
  const site = req.headers['sec-fetch-site'];
  return typeof site === 'string' ? site : undefined;
}

/**
 * The CSRF rule: a cookie-authenticated request that changes state must come from the gateway's
 * own origin or an allowed one. It changes state by its method, as a WebSocket handshake (a GET
 * that opens a channel any page could open with the browser's cookies), or when its route says
 * so (`changesState`: GET /auth/logout ends the session). The proof is the browser's
 * Sec-Fetch-Site `same-origin` or `none`, else the Origin, else the Referer's origin (as Go's
 * CrossOriginProtection reads them). Returns a refusal detail, or undefined when it passes.
 */
export function csrfRefusal(req: FastifyRequest, ownOrigin: string, allowed: ReadonlySet<string>, changesState = false): string | undefined {
  if (isSafeMethod(req.method) && req.headers.upgrade === undefined && !changesState) return undefined;
  const site = fetchSite(req);
  if (site === 'same-origin' || site === 'none') return undefined;
  const from = requestOrigin(req);
  if (from !== undefined && (from === ownOrigin || allowed.has(from))) return undefined;
  if (from !== undefined) return `origin ${from} may not make state-changing requests with a session cookie`;
  if (site !== undefined) return `a ${site} request (Sec-Fetch-Site) may not change state with a session cookie`;
  return 'a state-changing request with a session cookie must carry Origin (or Referer, or Sec-Fetch-Site)';
}
