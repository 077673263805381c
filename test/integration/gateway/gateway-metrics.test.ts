// A Prometheus pointed at the gateway: GET /metrics is the server's exposition, held to the
// server's role for it (viewer), for a program's bearer JWT and an API token alike; without a
// credential it is 401 JSON. It used to fall to the console's fallback and answer the page with
// 200, so a scraper saw a healthy target. Paths where programs ask (the API, auth, probes, API
// documents) are never answered with the console's page: 404 with a JSON detail. Console links
// written as paths still go to the console.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// What Prometheus sends when it scrapes.
const SCRAPE_ACCEPT = 'application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
let guiDir: string;

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  stack = await startTestStack({ workers: 0, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  guiDir = await mkdtemp(join(tmpdir(), 'svc-gui-'));
  await writeFile(join(guiDir, 'index.html'), '<!doctype html><title>svc console</title>');
  await mkdir(join(guiDir, 'assets'));
  gw = await startTestGateway(gatewayEnv(stack, idp, TEST_GATEWAY_SECRET), 0, guiDir);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await stack?.close();
  await idp?.close();
  if (guiDir) await rm(guiDir, { recursive: true, force: true });
});

/** GETs `path` at the gateway as a scraper does: redirects followed, the body as text. */
async function scrape(path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${gw.url}${path}`, { headers: { accept: SCRAPE_ACCEPT, ...headers }, redirect: 'follow' });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('gateway: GET /metrics', () => {
  it("is the server's exposition for a viewer's bearer JWT and a viewer's API token", async () => {
    expect(gw.servesGui).toBe(true);
    const viewerToken = await createApiToken(stack.deps.db, 'scraper', 'viewer');
    for (const headers of [bearer(await idp.programToken('program-viewer')), bearer(viewerToken)]) {
      const res = await scrape('/metrics', headers);
      expect(res.status, res.text.slice(0, 200)).toBe(200);
      expect(res.type).toContain('text/plain');
      expect(res.text).toContain('# TYPE svc_');
      expect(res.text).not.toContain('<title>');
    }
  });

  it('is 401 JSON without a credential, and 403 for a caller without a role', async () => {
    const anonymous = await scrape('/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.type).toContain('application/json');
    expect(Object.keys(JSON.parse(anonymous.text))).toEqual(['detail']);
    const none = await scrape('/metrics', bearer(await idp.programToken('program-none')));
    expect(none.status).toBe(403);
    expect(none.type).toContain('application/json');
  });
});

describe("gateway: the console's fallback", () => {
  it('answers paths where programs ask with 404 JSON, never the console page', async () => {
    for (const path of ['/metrics/', '/METRICS', '/api', '/auth/nope', '/healthz', '/readyz', '/livez', '/health/deep', '/openapi.json', '/.well-known/security.txt', '/federate?match[]=up']) {
      const res = await scrape(path);
      expect(res.status, path).toBe(404);
      expect(res.type, path).toContain('application/json');
      expect(JSON.parse(res.text), path).toEqual({ detail: `route not found: GET ${path.split('?')[0]}` });
    }
  });

  it('still sends a console link written as a path to the console as its route', async () => {
    const link = await fetch(`${gw.url}/executions/12?status=failed`, { redirect: 'manual' });
    expect(link.status).toBe(302);
    expect(link.headers.get('location')).toBe('/#/executions/12?status=failed');
    const page = await scrape('/catalog/entry/reports/daily.v2');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>svc console</title>');
  });
});
