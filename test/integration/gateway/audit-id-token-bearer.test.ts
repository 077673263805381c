// An ID token of the gateway's own login is not a bearer credential. With SVC_OIDC_AUDIENCE unset
// (its default is the gateway's client id, the `aud` of every ID token the provider issues to the
// gateway), the person's ID token verified as a bearer JWT, with the person's roles. Logout hands
// it to the browser (`id_token_hint` in the provider's logout address: the POST answer's
// `redirect`, which the page's script reads, and the GET's Location), so a person who had just
// logged out left a credential that opened the API as them, admin included, until the token's
// `exp` (hours at some providers), past the logout and any `svc gateway revoke`. A real provider,
// server and gateway, the person signed in in Chromium.
import { importJWK, SignJWT } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { GATEWAY_CLIENT_ID, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { freePort } from '../../helpers/ports.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
let browser: Browser;
let pub: string;

beforeAll(async () => {
  const port = await freePort();
  pub = `http://localhost:${port}`;
  idp = await startTestProvider([pub]);
  stack = await startTestStack({ workers: 0, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  // The default audience: the gateway's client id (no SVC_OIDC_AUDIENCE).
  const { SVC_OIDC_AUDIENCE: _audience, ...env } = gatewayEnv(stack, idp, TEST_GATEWAY_SECRET);
  gw = await startTestGateway({ ...env, SVC_OIDC_SCOPES: 'openid profile email roles', GATEWAY_PUBLIC_URL: pub }, port);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await stack?.close();
  await idp?.close();
});

const asBearer = async (token: string, path: string) => {
  const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A JWT signed with the provider's own key: an access token for the default audience, `extra` claims over it. */
async function providerSigned(extra: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ roles: ['admin'], ...extra })
    .setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' })
    .setIssuer(idp.issuer)
    .setAudience(GATEWAY_CLIENT_ID)
    .setSubject('program-default-audience')
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(await importJWK(idp.signingKey, 'RS256'));
}

describe('gateway: ID tokens as bearer tokens', () => {
  it('refuses the ID token a logout hands the browser: logged out is logged out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${pub}/auth/login?return_to=/auth/me`, { waitUntil: 'domcontentloaded' });
    for (let i = 0; i < 4 && !page.url().startsWith(pub); i++) {
      if (await page.locator('input[name=login]').count()) {
        await page.fill('input[name=login]', 'alice');
        await page.fill('input[name=password]', 'any-password');
      }
      await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type=submit]')]);
    }
    expect(JSON.parse((await page.textContent('body')) ?? '')).toMatchObject({ sub: 'alice', roles: ['admin'] });
    // The console signs out so: a same-origin POST, whose answer its script reads (from the
    // console's page: an API answer is a document whose policy lets nothing run).
    await page.goto(`${pub}/`, { waitUntil: 'domcontentloaded' });
    const out = await page.evaluate(async () => {
      const body: unknown = await (await fetch('/auth/logout', { method: 'POST' })).json();
      return typeof body === 'object' && body !== null && 'redirect' in body && 'logged_out' in body ? { loggedOut: body.logged_out, redirect: String(body.redirect) } : undefined;
    });
    await context.close();
    expect(out?.loggedOut).toBe(true);
    const idToken = new URL(out!.redirect).searchParams.get('id_token_hint');
    expect(idToken).toMatch(/^eyJ/);
    for (const path of ['/api/credentials', '/api/executions']) {
      const res = await asBearer(idToken!, path);
      expect(res.status, path).toBe(401);
      expect(res.body).toEqual({ detail: expect.stringContaining('ID token') });
    }
    // Nor is it anyone at /auth/me (whose 401 says only that no one is logged in).
    expect((await asBearer(idToken!, '/auth/me')).status).toBe(401);
  }, 90_000);

  it('still takes a program\'s access token for the default audience, and refuses one with the nonce of a login', async () => {
    expect((await asBearer(await providerSigned({}), '/api/credentials')).status).toBe(200);
    expect((await asBearer(await providerSigned({ nonce: 'n-0123456789' }), '/api/credentials')).status).toBe(401);
    // Issued to the gateway's own client (azp, or RFC 9068's client_id): not a program's.
    expect((await asBearer(await providerSigned({ azp: GATEWAY_CLIENT_ID }), '/api/credentials')).status).toBe(401);
    expect((await asBearer(await providerSigned({ azp: 'program-admin' }), '/api/credentials')).status).toBe(200);
  });
});
