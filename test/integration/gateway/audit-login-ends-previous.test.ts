// A login left the session the browser held before it live: its cookie was replaced, but its row
// stayed, so the old value (another person's on a shared machine, or a copy someone kept) still
// opened /auth/me (200) at every gateway until it expired, up to SVC_GATEWAY_SESSION_MAX_SECONDS.
// The callback now ends that session as it starts the new one.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.ts';
import { sessionIdHash } from '../../../src/gateway/session-store.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { API_AUDIENCE, GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { freePort } from '../../helpers/ports.ts';

let database: TestDatabase & { db: Db };
let idp: TestProvider;
let gw: TestGateway;
let other: TestGateway; // a second gateway on the same database
let browser: Browser;
let pub: string;

beforeAll(async () => {
  const port = await freePort();
  pub = `http://localhost:${port}`;
  database = await createMigratedDatabase();
  idp = await startTestProvider([pub]);
  const env = {
    SVC_SERVER_URL: 'http://127.0.0.1:1',
    SVC_DATABASE_URL: database.url,
    SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET,
    SVC_OIDC_ISSUER: idp.issuer,
    SVC_OIDC_CLIENT_ID: GATEWAY_CLIENT_ID,
    SVC_OIDC_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
    SVC_OIDC_AUDIENCE: API_AUDIENCE,
    SVC_OIDC_SCOPES: 'openid profile email roles',
    GATEWAY_PUBLIC_URL: pub,
  };
  gw = await startTestGateway(env, port);
  other = await startTestGateway(env);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await other?.close();
  await gw?.close();
  await idp?.close();
  await database?.drop();
});

it('ends the session a browser held when it logs in again, at every gateway', async () => {
  // The browser holds victor's session (a shared machine), then alice logs in on it.
  const before = await gw.sessions!.create({ sub: 'victor', name: null, email: null, role: 'viewer', paths: null, idToken: undefined });
  const cookie = (sid: string) => ({ cookie: `svc_session=${sid}` });
  expect((await http(other.url, 'GET', '/auth/me', undefined, cookie(before))).status).toBe(200);
  const context = await browser.newContext();
  await context.addCookies([{ name: 'svc_session', value: before, url: pub, httpOnly: true, sameSite: 'Lax' }]);
  const page = await context.newPage();
  await page.goto(`${pub}/auth/login?return_to=/auth/me`, { waitUntil: 'domcontentloaded' });
  for (let i = 0; i < 4 && !page.url().startsWith(pub); i++) {
    if (await page.locator('input[name=login]').count()) {
      await page.fill('input[name=login]', 'alice');
      await page.fill('input[name=password]', 'any-password');
    }
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type=submit]')]);
  }
  expect(page.url()).toBe(`${pub}/auth/me`);
  expect(JSON.parse((await page.textContent('body')) ?? '')).toMatchObject({ sub: 'alice' });
  const after = (await context.cookies(pub)).find((c) => c.name === 'svc_session')?.value;
  expect(after).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(after).not.toBe(before);
  await context.close();

  // The old value opens nothing, here or at the other gateway; its row is gone. The new one works.
  expect((await http(pub, 'GET', '/auth/me', undefined, cookie(before))).status).toBe(401);
  expect((await http(other.url, 'GET', '/auth/me', undefined, cookie(before))).status).toBe(401);
  const { rows } = await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.gateway_session WHERE id_hash = $1`, [sessionIdHash(before)]);
  expect(rows[0].n).toBe(0);
  expect((await http(other.url, 'GET', '/auth/me', undefined, cookie(after!))).body).toMatchObject({ sub: 'alice' });
}, 60_000);
