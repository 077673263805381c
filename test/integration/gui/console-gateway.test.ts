// The console behind a gateway: unauthenticated users are sent to its login, the signed-in user
// is shown, views hide what the role cannot do, logout goes to the gateway. The gateway here is a
// stand-in of a few lines (the gateway issue brings `svc gateway` with a real OpenID provider):
// it serves the console's files at /, runtime-config.json for gateway mode, /auth/login|logout|me
// by a session cookie, and forwards /api with the identity the server verifies (x-svc-identity).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY_HEADER, signIdentity } from '../../../src/auth/identity-assertion.ts';
import type { Role } from '../../../src/auth/roles.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const SECRET = 'gateway-secret-for-the-console-test-0123456789';
let stack: TestStack;
let gateway: Server;
let gatewayUrl: string;
let browser: Browser;
// Who the stand-in identity provider signs in next.
let nextRole: Role = 'viewer';

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: SECRET } });
  gateway = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const role = /(?:^|; )session=(viewer|operator|admin)/.exec(req.headers.cookie ?? '')?.[1] as Role | undefined;
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/auth/login') return res.writeHead(302, { location: '/', 'set-cookie': `session=${nextRole}; Path=/; HttpOnly` }).end();
    if (url.pathname === '/auth/logout') return res.writeHead(302, { location: '/auth/signed-out', 'set-cookie': 'session=; Path=/; Max-Age=0' }).end();
    if (url.pathname === '/auth/signed-out') return res.writeHead(200, { 'content-type': 'text/html' }).end('<p>signed out</p>');
    if (url.pathname === '/auth/me') return role ? json(200, { sub: `${role}-1`, name: `Ada ${role}`, email: `${role}@example.test`, roles: [role] }) : json(401, { detail: 'not signed in' });
    if (url.pathname === '/runtime-config.json') {
      return json(200, { auth: 'gateway', api_base: '/api', login_url: '/auth/login', logout_url: '/auth/logout', me_url: '/auth/me', allow_skip_auth: false });
    }
    const target = url.pathname.startsWith('/api/') ? url.pathname + url.search : `/ui${url.pathname}`;
    const headers: Record<string, string> = { accept: req.headers.accept ?? '*/*' };
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    if (role) headers[IDENTITY_HEADER] = signIdentity({ sub: `${role}-1`, role, exp: Math.floor(Date.now() / 1000) + 300 }, SECRET);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const answer = await fetch(stack.url + target, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  gateway.listen(0, '127.0.0.1');
  await once(gateway, 'listening');
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  gateway?.close();
  await stack?.close();
});

describe('console behind a gateway', () => {
  it('sends the user to login, shows who is signed in, hides what a viewer cannot do, logs out', async () => {
    // Without the gateway's identity the API refuses (the console cannot skip authentication).
    expect((await fetch(`${stack.url}/api/executions`)).status).toBe(401);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // /auth/me answers 401 before login, by design; the browser logs it.
      if (m.type() === 'error' && !/status of (401|404)/.test(m.text())) errors.push(m.text());
    });
    const visited: string[] = [];
    page.on('request', (r) => {
      if (r.isNavigationRequest()) visited.push(new URL(r.url()).pathname);
    });

    nextRole = 'viewer';
    await page.goto(`${gatewayUrl}/`);
    await page.getByText('Ada viewer (viewer)').waitFor();
    expect(visited).toContain('/auth/login');
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    await page.goto(`${gatewayUrl}/#/catalog`);
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
    expect(await page.getByRole('link', { name: 'Register a playbook' }).count()).toBe(0);
    await page.goto(`${gatewayUrl}/#/operations`);
    await page.getByRole('heading', { name: 'Worker pools' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Stuck executions' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'New credential' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/auth\/signed-out$/);

    nextRole = 'operator';
    await page.goto(`${gatewayUrl}/`);
    await page.getByText('Ada operator (operator)').waitFor();
    await page.goto(`${gatewayUrl}/#/catalog`);
    await page.getByRole('link', { name: 'Register a playbook' }).waitFor();
    expect(await page.getByRole('form', { name: 'New credential' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
