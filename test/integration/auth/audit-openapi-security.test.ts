// The OpenAPI document (GET /docs/json) says which credential each operation takes, as the auth
// hook checks it: it declared the API token (`security: [{bearer: []}]`) for every operation, so
// the health routes and the webhook route, which take none (a delivery is authenticated by its
// trigger's signature; the operation's own description says "No API token"), told a client
// generated from it to send one, and the worker routes, which refuse every API token, named the
// API token alone. Checked against the routes' declared access and against real requests.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteAccess } from '../../../src/api/access.ts';
import { valibotCompiler } from '../../../src/api/validation.ts';
import { registerRoutes } from '../../../src/app.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken, TEST_WORKER_TOKEN } from '../../helpers/auth.ts';

type Operation = { security?: Record<string, string[]>[] };
type Document = { security?: Record<string, string[]>[]; components: { securitySchemes: Record<string, { type: string; scheme?: string }> }; paths: Record<string, Record<string, Operation>> };

let t: TestApp;
let doc: Document;
// Each documented operation's declared access, by `METHOD /path` as the document spells the path.
const access = new Map<string, RouteAccess>();

beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
  doc = (await (await fetch(`${t.url}/docs/json`)).json()) as Document;
  const app = Fastify();
  app.setValidatorCompiler(valibotCompiler);
  app.addHook('onRoute', (route) => {
    if (!route.config?.access || route.schema?.hide) return;
    const documented = route.url === '/api/hooks/*' ? '/api/hooks/{path}/{name}' : route.url.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
    for (const method of [route.method].flat()) access.set(`${method.toLowerCase()} ${documented}`, route.config.access);
  });
  await registerRoutes(app, t.deps);
  await app.ready();
  await app.close();
});
afterAll(async () => t?.close());

/** The security requirements in force for an operation: its own, else the document's. */
const securityOf = (op: Operation): Record<string, string[]>[] => op.security ?? doc.security ?? [];
const schemesOf = (op: Operation): string[] => securityOf(op).flatMap((r) => Object.keys(r)).sort();

describe('OpenAPI security requirements', () => {
  it('name no credential for the public routes, the worker token for worker routes, and the API token for the rest', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearer', 'worker']);
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const declared = access.get(`${method} ${path}`);
        if (!declared) continue; // the documents' own routes
        checked++;
        const expected = declared.level === 'public' ? [] : declared.level === 'worker' ? ['worker'] : declared.worker ? ['bearer', 'worker'] : ['bearer'];
        expect(schemesOf(op), `${method} ${path}`).toEqual(expected);
        // Alternatives, not both at once: each requirement object names one scheme.
        for (const requirement of securityOf(op)) expect(Object.keys(requirement).length, `${method} ${path}`).toBe(1);
      }
    }
    expect(checked).toBeGreaterThan(60);
  });

  it('matches what the server takes: the public routes answer without a credential, worker routes refuse an admin API token and take the worker token', async () => {
    const admin = await createApiToken(t.deps.db, 'openapi-security-admin', 'admin');
    const health = await fetch(`${t.url}/api/health`);
    expect(health.status).toBe(200);
    expect(schemesOf(doc.paths['/api/health'].get)).toEqual([]);
    // No API token, yet not a 401 for the lack of one: an unknown trigger is the route's own 404.
    const hook = await fetch(`${t.url}/api/hooks/no/such`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(hook.status).toBe(404);
    expect(schemesOf(doc.paths['/api/hooks/{path}/{name}'].post)).toEqual([]);
    // A worker route: the admin's token is refused, the worker token passes the check (then 422 for the empty body).
    const claim = (headers: Record<string, string>) => fetch(`${t.url}/api/worker/claim`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
    expect((await claim(bearer(admin))).status).toBe(401);
    expect((await claim(bearer(TEST_WORKER_TOKEN))).status).toBe(422);
    expect(schemesOf(doc.paths['/api/worker/claim'].post)).toEqual(['worker']);
    expect(doc.components.securitySchemes.worker).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
