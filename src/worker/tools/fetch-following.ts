import { refusedHost, TASK_DISPATCHER } from './metadata-guard.ts';

// The Fetch standard's bound on redirects, which fetch itself applies.
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// What fetch drops by itself on a hop to another origin: the first origin's alone.
const ORIGIN_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];
// What describes a body that a redirect turns into a GET without one.
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

export type FollowingInit = { method: string; headers: Headers; body?: string; signal: AbortSignal };

/**
 * fetch(url, init), following redirects as fetch does (at most 20; a 303, and a 301 or 302 of a
 * POST, go on as a GET without body; 307 and 308 keep both), except that once a hop leaves the
 * origin it was at, `originOnly` headers are dropped for good beside the Authorization and Cookie
 * fetch drops: fetch sends every other header on, so a credential's api key or custom headers
 * reached whatever host a redirect named. `bodyOriginOnly` (a body that holds a secret: a token
 * request's client secret) refuses a hop to another origin that would send the body on (307,
 * 308), where fetch would. A redirect it cannot follow throws, as fetch does. No hop connects
 * to a cloud metadata service (metadata-guard.ts: by literal address here, by name in the
 * dispatcher's lookup): it would answer with the worker's identity.
 */
export async function fetchFollowing(url: URL, init: FollowingInit, originOnly: readonly string[], opts: { bodyOriginOnly?: boolean; fetch?: typeof fetch } = {}): Promise<Response> {
  const send = opts.fetch ?? fetch;
  const headers = new Headers(init.headers);
  let { method, body } = init;
  let current = url;
  for (let hops = 0; ; hops++) {
    const refused = refusedHost(current);
    if (refused !== undefined) throw new TypeError(refused);
    const response = await send(current, { method, headers, body, signal: init.signal, redirect: 'manual', dispatcher: TASK_DISPATCHER });
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    await response.body?.cancel();
    if (hops === MAX_REDIRECTS) throw new TypeError(`redirect count exceeded (${MAX_REDIRECTS})`);
    const next = new URL(location, current);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new TypeError(`a redirect to a URL that is not http(s): ${next.protocol}`);
    // fetch refuses it too, but its error quotes the URL, password and all, into the task's error.
    if (next.username !== '' || next.password !== '') throw new TypeError(`a redirect (${response.status}) to a URL with a user name or password: not followed`);
    if (((response.status === 301 || response.status === 302) && method === 'POST') || (response.status === 303 && method !== 'GET' && method !== 'HEAD')) {
      method = 'GET';
      body = undefined;
      for (const name of BODY_HEADERS) headers.delete(name);
    }
    if (next.origin !== current.origin) {
      if (opts.bodyOriginOnly && body !== undefined) throw new TypeError(`a redirect (${response.status}) to another origin, ${next.origin}, would send the request's body on: not followed`);
      for (const name of [...ORIGIN_HEADERS, ...originOnly]) headers.delete(name);
    }
    current = next;
  }
}
