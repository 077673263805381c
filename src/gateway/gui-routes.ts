// What the GUI needs from the gateway: its runtime settings (so no GUI build can skip
// authentication behind a gateway) and its static files at `/` when gui/dist exists.
import type { FastifyInstance } from 'fastify';
import { GUI_DIST_DIR, readGuiFiles, serveGuiFiles } from '../gui-files.ts';

export type RuntimeConfig = {
  auth: 'gateway';
  api_base: string;
  login_url: string | null;
  logout_url: string | null;
  me_url: string;
  allow_skip_auth: false;
};

/** The GUI's settings behind the gateway; without an OpenID provider there is no login page. */
export function runtimeConfig(hasProvider: boolean): RuntimeConfig {
  return {
    auth: 'gateway',
    api_base: '/api',
    login_url: hasProvider ? '/auth/login' : null,
    logout_url: hasProvider ? '/auth/logout' : null,
    me_url: '/auth/me',
    allow_skip_auth: false,
  };
}

/** Registers /runtime-config.json, and the GUI's files at / when `dir` holds an index.html. */
export async function registerGuiRoutes(app: FastifyInstance, hasProvider: boolean, dir: string = GUI_DIST_DIR): Promise<boolean> {
  const settings = runtimeConfig(hasProvider);
  app.get('/runtime-config.json', { config: { gate: 'public' } }, async (_req, reply) => reply.header('cache-control', 'no-store').send(settings));
  const files = readGuiFiles(dir);
  if (!files) return false;
  serveGuiFiles(app, '/', files, { config: { gate: 'public' } });
  return true;
}
