import type { FastifyInstance } from 'fastify';

// Every answer tells a browser not to guess its type, not to be framed (the console's buttons
// cancel, pause and approve: no other site may lay its page over them) and not to pass the URL
// on. A page of ours loads only this origin's scripts, styles, images and connections: no inline
// script, nothing from elsewhere, no data sent elsewhere. `'unsafe-eval'` stays allowed: browser
// automation that drives the console (Playwright's string predicates) evaluates strings in the
// page; the bundle itself never does, and no inline or foreign script can run to call eval.

/** Headers on every answer. */
const ALWAYS = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' } as const;

/**
 * The policy of whatever is not a page of ours (JSON, an asset): no page may frame it, and nothing
 * runs or loads in it should a browser show it as a document (an answer opened in a tab, an SVG
 * asset opened by its URL); `nosniff` keeps it from being read as a page.
 */
const NOT_A_PAGE_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** The console's page (gui/): its module script, its stylesheet, its data: icon, the API and the inspection WebSocket. */
export const CONSOLE_POLICY = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Swagger UI's and ReDoc's pages: ReDoc makes its styles at run time and its search worker from a blob. */
export const DOCS_POLICY =
  "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Every header above for an answer that is not a page, for answers written to the socket before fastify sees a request. */
export const NOT_A_PAGE_HEADERS: Readonly<Record<string, string>> = { ...ALWAYS, 'content-security-policy': NOT_A_PAGE_POLICY };

/**
 * Adds the headers above to every answer of `app`; a route (or plugin scope) that serves a page
 * sets its own `content-security-policy`, and every other answer gets the one that forbids framing.
 * An answer that says nothing of caching is `no-store`: API answers carry credential data, tokens
 * and who may do what, which no browser or proxy cache should keep; the console's files say how
 * they are cached themselves.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.headers(ALWAYS);
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', NOT_A_PAGE_POLICY);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
