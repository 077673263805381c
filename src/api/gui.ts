// The browser console (gui/, built by Vite into gui/dist) served at /ui/, with the runtime
// settings it reads first (/ui/runtime-config.json). The built files are read once at start into
// memory: a few hundred KB, and no path from a request ever reaches the file system.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { PUBLIC } from './access.ts';

/** Where `npm run build:gui` writes the console's files. */
export const GUI_DIST_DIR = join(import.meta.dirname, '../../gui/dist');

/** The mount point of the console on the API server. */
const GUI_PREFIX = '/ui/';

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

type StaticFile = { body: Buffer; type: string };

/** The settings the console reads before anything else (the shared contract with the gateway). */
export function runtimeConfig(config: Pick<Config, 'SVC_AUTH'>) {
  const gateway = config.SVC_AUTH === 'gateway';
  return {
    auth: config.SVC_AUTH,
    api_base: '/api',
    login_url: gateway ? '/auth/login' : null,
    logout_url: gateway ? '/auth/logout' : null,
    me_url: gateway ? '/auth/me' : null,
    // Only a server that checks no caller lets the console go on without credentials.
    allow_skip_auth: config.SVC_AUTH === 'none',
  };
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
 * Serves the console at /ui/ (index.html, its assets, runtime-config.json). Without built files
 * it logs how to build them and registers only the runtime settings: the API is served as before.
 */
export async function guiRoutes(app: FastifyInstance, deps: { config: Config; log: Logger; guiDir?: string }): Promise<void> {
  const dir = deps.guiDir ?? GUI_DIST_DIR;
  const files = readGuiFiles(dir);
  const settings = runtimeConfig(deps.config);
  const opts = { schema: { hide: true }, config: { access: PUBLIC } };

  app.get(`${GUI_PREFIX}runtime-config.json`, opts, async (_req, reply) => reply.header('cache-control', 'no-store').send(settings));
  if (!files) {
    deps.log.warn({ dir }, 'the web console is not built, so /ui/ is not served: run `npm run build:gui` (npm install does it too)');
    return;
  }
  const index = files.get('index.html')!;
  const sendIndex = (reply: FastifyReply) => reply.type(index.type).header('cache-control', 'no-cache').send(index.body);

  app.get('/ui', opts, async (_req, reply) => reply.redirect(GUI_PREFIX, 301));
  app.get(GUI_PREFIX, opts, async (_req, reply) => sendIndex(reply));
  app.get(`${GUI_PREFIX}*`, opts, async (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    const file = files.get(path);
    if (file) {
      return reply
        .type(file.type)
        .header('cache-control', path.startsWith('assets/') ? IMMUTABLE_CACHE : 'no-cache')
        .send(file.body);
    }
    // The console routes by the URL's hash, so any other path is a stale or mistyped link: the app.
    if (path.startsWith('assets/')) return reply.code(404).send({ detail: `${path} not found` });
    return sendIndex(reply);
  });
}
