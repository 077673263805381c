// Every route declares who may call it (config.access); one that does not is refused whoever calls.
import Fastify, { type RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteAccess } from '../../../src/api/access.ts';
import { valibotCompiler } from '../../../src/api/validation.ts';
import { buildApp, registerRoutes } from '../../../src/app.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
});
afterAll(async () => t?.close());

const viewer: RouteAccess = { level: 'viewer' };
const operator: RouteAccess = { level: 'operator' };
const admin: RouteAccess = { level: 'admin' };
const worker: RouteAccess = { level: 'worker' };

// The access of the API's routes, pinned: a change here is a decision, not an accident.
const EXPECTED: Record<string, RouteAccess> = {
  'GET /api/health': { level: 'public' },
  'GET /health': { level: 'public' },
  'GET /metrics': viewer,
  'GET /api/executions': viewer,
  'GET /api/executions/:execution_id': viewer,
  'GET /api/execution/:execution_id': viewer,
  'GET /api/executions/:id/state': viewer,
  'GET /api/executions/:id/inspect': viewer,
  'GET /api/events/:execution_id': viewer,
  'GET /api/catalog/playbooks': viewer,
  'GET /api/catalog/playbook/*': viewer,
  'GET /api/worker/pools': viewer,
  'GET /api/credentials': viewer,
  'GET /api/credentials/:name': { level: 'viewer', worker: true }, // include_data=true: admin or worker, checked in the handler
  'POST /api/run/playbook': operator,
  'POST /api/execute': operator,
  'POST /api/executions/:id/cancel': operator,
  'POST /api/executions/cleanup': operator,
  'POST /api/catalog/playbook': operator,
  'POST /api/catalog/register': operator,
  'POST /api/credentials': admin,
  'DELETE /api/credentials/:name': admin,
  'PUT /api/credentials/:name': admin,
  'PATCH /api/credentials/:name': admin,
  'POST /api/credentials/:name/test': admin,
  'GET /api/credential-types': viewer,
  'POST /api/postgres/execute': admin,
  'GET /api/keychain/catalog/:catalog_id': admin,
  'GET /api/keychain/:catalog_id/:keychain_name': { level: 'admin', worker: true },
  'POST /api/keychain/:catalog_id/:keychain_name': { level: 'admin', worker: true },
  'DELETE /api/keychain/:catalog_id/:keychain_name': admin,
  'POST /api/keychain/:catalog_id/:keychain_name/renewal': { level: 'admin', worker: true },
  'DELETE /api/keychain/:catalog_id/:keychain_name/renewal': { level: 'admin', worker: true },
  'POST /api/admin/command_reaper/sweep': admin,
  'POST /api/events': worker,
  'POST /api/events/batch': { level: 'operator', worker: true },
  'GET /api/events/batch/:request_id/status': { level: 'viewer', worker: true },
  'GET /api/events/batch/:request_id/stream': { level: 'viewer', worker: true },
  'POST /api/worker/report': worker,
  'POST /api/worker/claim': worker,
  'POST /api/commands/:id/claim': worker,
  'POST /api/worker/pool/register': worker,
  'POST /api/worker/pool/heartbeat': worker,
  'POST /api/worker/pool/deregister': worker,
  'GET /api/worker/service-reader': worker, // and only for a held command with a read_only postgres task without auth
  'GET /api/agents': viewer,
  'GET /api/mcp/servers': viewer,
  'GET /api/mcp/servers/:name': { level: 'viewer', worker: true }, // workers resolve a task's `server:`
  'POST /api/mcp/mcp/:server_name/lifecycle/:action': operator,
  'GET /api/secrets/:handle': worker,
  'POST /api/executions/:id/retry': operator,
  'GET /api/executions/:id/steps/:step': viewer,
  'POST /api/executions/:id/pause': operator,
  'POST /api/executions/:id/resume': operator,
  'POST /api/executions/:id/signals/:name': viewer, // the waiting step's approval roles decide (operator when it names none)
  'GET /api/triggers': viewer,
  'POST /api/triggers/*': operator, // pause, resume, fire, backfill
  'GET /api/limits': viewer,
  'GET /api/limits/:name': viewer,
  'PUT /api/limits/:name': operator,
  'DELETE /api/limits/:name': operator,
  'POST /api/hooks/*': { level: 'public' }, // the trigger's own signature authenticates each delivery
};

describe('route access declarations', () => {
  it('every registered route declares its access; docs are public; the API routes have the access pinned above', async () => {
    const seen: { key: string; route: RouteOptions }[] = [];
    const app = Fastify();
    app.setValidatorCompiler(valibotCompiler); // as buildApp does: the routes' schemas are valibot's
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) seen.push({ key: `${method} ${route.url}`, route });
    });
    await registerRoutes(app, t.deps);
    await app.ready();
    expect(seen.length).toBeGreaterThan(Object.keys(EXPECTED).length);
    // Read after ready: a plugin's scope may set the declaration in an onRoute hook of its own.
    const undeclared = seen.filter((s) => !s.route.config?.access).map((s) => s.key);
    expect(undeclared).toEqual([]);
    for (const { key, route } of seen) {
      const [, url] = key.split(' ');
      if (url.startsWith('/docs') || url.startsWith('/redoc') || url.startsWith('/ui')) expect(route.config?.access, key).toEqual({ level: 'public' });
      else if (!key.startsWith('HEAD ')) expect(route.config?.access, key).toEqual(EXPECTED[key] ?? expect.anything());
    }
    const keys = new Set(seen.map((s) => s.key));
    expect(Object.keys(EXPECTED).filter((k) => !keys.has(k))).toEqual([]);
    await app.close();
  });

  it('a route without a declaration is refused (403, detail only), whatever the caller', async () => {
    const app = await buildApp({ ...t.deps, config: { ...t.deps.config, SVC_AUTH: 'none' } });
    app.get('/undeclared', async () => ({ secret: 'data' }));
    app.get('/declared', { config: { access: { level: 'public' } } }, async () => ({ open: true }));
    const refused = await app.inject({ method: 'GET', url: '/undeclared' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ detail: expect.stringContaining('declares no access') });
    expect((await app.inject({ method: 'GET', url: '/declared' })).statusCode).toBe(200);
    await app.close();
  });
});
