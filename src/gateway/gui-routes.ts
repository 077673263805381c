// What the GUI needs from the gateway: its runtime settings (so no GUI build can skip
// authentication behind a gateway) and its static files at `/` when gui/dist exists.
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The GUI build the gateway serves (another process may build it; checked at start). */
export const GUI_DIST_DIR = join(import.meta.dirname, '../../gui/dist');

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
  if (!existsSync(join(dir, 'index.html'))) return false;
  await app.register(async (gui) => {
    // The plugin's routes are registered without a gate: its scope marks every one public.
    gui.addHook('onRoute', (route) => {
      route.config = { ...route.config, gate: 'public' };
    });
    await gui.register(fastifyStatic, { root: dir, prefix: '/', index: 'index.html', wildcard: true, dotfiles: 'deny' });
  });
  return true;
}
