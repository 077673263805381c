// The browser console's built files (gui/, built by Vite into gui/dist) and the one way they are
// served: by the API server at /ui/ and by the gateway at /. The files are read once at start into
// memory (a few hundred KB), so no path from a request ever reaches the file system.
import type { FastifyInstance, FastifyReply, RouteShorthandOptions } from 'fastify';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { CONSOLE_POLICY } from './security-headers.ts';

/** Where `npm run build:gui` writes the console's files. */
export const GUI_DIST_DIR = join(import.meta.dirname, '../gui/dist');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

// Vite names assets by content hash: they never change under a name, so browsers keep them.
const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

export type StaticFile = { body: Buffer; type: string };

/**
 * First segments of paths where programs, not people, ask: the API, the gateway's login routes,
 * metrics, health and readiness probes, API documents, well-known files. None is a console link,
 * so the fallback below answers them 404 with a JSON detail: the console's page (or a redirect to
 * it, which scrapers and probes follow) answered 200 and told a Prometheus or a health check
 * pointed at the wrong path that all was well. Compared lower-cased, as `/API/x` is no link either.
 */
const MACHINE_SEGMENTS: ReadonlySet<string> = new Set(['api', 'auth', 'metrics', 'federate', 'health', 'healthz', 'livez', 'readyz', 'ready', 'docs', 'redoc', 'openapi.json', 'openapi.yaml', '.well-known']);

/** True when `path` (below the console's root, no leading '/') is under a machine's first segment. */
function isMachinePath(path: string): boolean {
  return MACHINE_SEGMENTS.has((path.split('/', 1)[0] ?? '').toLowerCase());
}

/** Every file under `dir` by its URL path (forward slashes), or null when there is no index.html. */
export function readGuiFiles(dir: string): Map<string, StaticFile> | null {
  let names: string[];
  try {
    if (!statSync(join(dir, 'index.html')).isFile()) return null;
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return null;
  }
  const files = new Map<string, StaticFile>();
  for (const name of names) {
    const full = join(dir, name);
    if (!statSync(full).isFile()) continue;
    const url = relative(dir, full).split(sep).join('/');
    files.set(url, { body: readFileSync(full), type: CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream' });
  }
  return files;
}

/**
 * Serves `files` under `prefix` (ending in '/'), each route with `opts` (the caller's access
 * declaration). An unknown path is sent to the console's root as the route it names, but for a
 * missing asset and a machine's path (MACHINE_SEGMENTS): 404 with a JSON detail, never the page.
 */
export function serveGuiFiles(app: FastifyInstance, prefix: string, files: Map<string, StaticFile>, opts: RouteShorthandOptions): void {
  const index = files.get('index.html')!;
  const sendIndex = (reply: FastifyReply) => reply.type(index.type).header('cache-control', 'no-cache').header('content-security-policy', CONSOLE_POLICY).send(index.body);

  if (prefix !== '/') app.get(prefix.slice(0, -1), opts, async (_req, reply) => reply.redirect(prefix, 301));
  app.get(prefix, opts, async (_req, reply) => sendIndex(reply));
  app.get(`${prefix}*`, opts, async (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    const file = files.get(path);
    if (file) {
      return reply
        .type(file.type)
        .header('cache-control', path.startsWith('assets/') ? IMMUTABLE_CACHE : 'no-cache')
        .send(file.body);
    }
    if (path.startsWith('assets/')) return reply.code(404).send({ detail: `${path} not found` });
    if (isMachinePath(path)) return reply.code(404).send({ detail: `route not found: ${req.method} ${req.url.split('?')[0]}` });
    // Any other path is a link written as a path (`executions/12`): the console routes by the URL's
    // hash and loads its files relative to its root, so it goes there as that route
    // (`#/executions/12`, the query kept). index.html answered here would ask for its files below
    // this path, get pages for scripts, and show nothing.
    // The path as sent (a route's %2F stays one), only what a Location cannot carry encoded.
    const sent = req.url.startsWith(prefix) ? req.url.slice(prefix.length) : path.split('/').map(encodeURIComponent).join('/');
    return reply.redirect(`${prefix}#/${sent.replace(/[^\w\-.~!$&'()*+,;=:@/%?]/g, (c) => encodeURIComponent(c))}`, 302);
  });
}
