// The browser console served at /ui/ (by the shared src/gui-files.ts, as the gateway serves it at
// /), with the runtime settings it reads first (/ui/runtime-config.json).
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { GUI_DIST_DIR, readGuiFiles, serveGuiFiles } from '../gui-files.ts';
import type { Logger } from '../log.ts';
import { PUBLIC } from './access.ts';

/** The mount point of the console on the API server. */
const GUI_PREFIX = '/ui/';

/**
 * The settings the console reads before anything else (the shared contract with the gateway).
 * The server has no login of its own: behind a gateway (SVC_AUTH=gateway) people log in at the
 * gateway, whose console has its own settings; this one then takes the API tokens the server
 * takes in that mode too, so it names no login, logout or /auth/me here.
 */
export function runtimeConfig(config: Pick<Config, 'SVC_AUTH'>) {
  return {
    auth: config.SVC_AUTH,
    api_base: '/api',
    login_url: null,
    logout_url: null,
    me_url: null,
    // Only a server that checks no caller lets the console go on without credentials.
    allow_skip_auth: config.SVC_AUTH === 'none',
  };
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
  serveGuiFiles(app, GUI_PREFIX, files, opts);
}
