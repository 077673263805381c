// People's login through the gateway, driven in headless Chromium against a real OpenID provider
// and a real server: code flow with PKCE, an HttpOnly session cookie no script can read, roles,
// the CSRF rule, logout ending the session server-side, and callback addresses per public hostname.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startHttpTarget } from '../../helpers/http-target.ts';
import { freePort } from '../../helpers/ports.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const GUI_ORIGIN = 'http://gui.example.test';
const PLAYBOOK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: hello, path: gw/login }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
let browser: Browser;
let pub: string; // the canonical public origin (http://localhost:PORT)
let alt: string; // a second hostname of the same gateway

beforeAll(async () => {
  const port = await freePort();
  pub = `http://localhost:${port}`;
  alt = `http://127.0.0.1:${port}`;
  idp = await startTestProvider([pub, alt]);
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  gw = await startTestGateway(
    {
      ...gatewayEnv(stack, idp, TEST_GATEWAY_SECRET),
      SVC_OIDC_SCOPES: 'openid profile email roles',
      GATEWAY_PUBLIC_URL: `${pub},${alt}`,
      CORS_ALLOWED_ORIGINS: GUI_ORIGIN,
    },
    port,
  );
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await stack?.close();
  await idp?.close();
});

/** Logs `login` in through the provider's login and consent pages; ends on `returnTo`. */
async function logIn(page: Page, login: string, returnTo = '/auth/me'): Promise<void> {
  await page.goto(`${pub}/auth/login?return_to=${encodeURIComponent(returnTo)}`, { waitUntil: 'domcontentloaded' });
  for (let i = 0; i < 4 && !page.url().startsWith(pub); i++) {
    if (await page.locator('input[name=login]').count()) {
      await page.fill('input[name=login]', login);
      await page.fill('input[name=password]', 'any-password');
    }
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type=submit]')]);
  }
  expect(page.url()).toBe(pub + returnTo);
}

/** Opens the console here: API answers (JSON) are documents whose policy lets nothing run, fetch included. */
const onConsole = (page: Page) => page.goto(`${pub}/`, { waitUntil: 'domcontentloaded' });

const inPage = (page: Page, method: string, path: string, body?: unknown) =>
  page.evaluate(
    async ([m, p, b]) => {
      const res = await fetch(p as string, { method: m as string, headers: b ? { 'content-type': 'application/json' } : {}, body: b ? JSON.stringify(b) : undefined });
      return { status: res.status, body: await res.text() };
    },
    [method, path, body] as const,
  );

describe('gateway: browser login', () => {
  it('logs a person in with the code flow, behind a session cookie no script can read', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // The provider's redirect to the callback carries the authorization code: it must not be logged.
    const codes: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname === '/auth/callback' && u.searchParams.get('code')) codes.push(u.searchParams.get('code')!);
    });
    await logIn(page, 'alice');
    expect(codes.length).toBe(1);
    expect(JSON.parse((await page.textContent('body')) ?? '')).toEqual({ sub: 'alice', name: 'User alice', email: 'alice@example.test', roles: ['admin'] });

    const cookies = await context.cookies(pub);
    const session = cookies.find((c) => c.name === 'svc_session');
    expect(session).toBeDefined();
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', domain: 'localhost', path: '/' });
    expect(await page.evaluate('document.cookie')).not.toContain('svc_session');

    // The session opens the API; a same-origin state-changing fetch passes the CSRF rule.
    await onConsole(page);
    expect((await inPage(page, 'GET', '/api/executions')).status).toBe(200);
    expect((await inPage(page, 'POST', '/api/catalog/playbook', { content: PLAYBOOK })).status).toBe(201);
    const run = await inPage(page, 'POST', '/api/run/playbook', { path: 'gw/login' });
    expect(run.status).toBe(200);

    // CSRF: the same cookie from another origin, or from nowhere, changes nothing.
    const cookie = { cookie: `svc_session=${session!.value}` };
    const evil = await http(pub, 'POST', '/api/run/playbook', { path: 'gw/login' }, { ...cookie, origin: 'http://evil.example.test' });
    expect(evil.status).toBe(403);
    expect(Object.keys(evil.body)).toEqual(['detail']);
    expect((await http(pub, 'POST', '/api/run/playbook', { path: 'gw/login' }, cookie)).status).toBe(403);
    // An allowed GUI origin may; reads need no origin.
    expect((await http(pub, 'POST', '/api/run/playbook', { path: 'gw/login' }, { ...cookie, origin: GUI_ORIGIN })).status).toBe(200);
    expect((await http(pub, 'GET', '/api/executions', undefined, cookie)).status).toBe(200);

    // Logout ends the session here (the old cookie opens nothing) and at the provider.
    await page.goto(`${pub}/auth/logout`, { waitUntil: 'domcontentloaded' });
    expect(page.url().startsWith(idp.issuer)).toBe(true);
    expect((await http(pub, 'GET', '/auth/me', undefined, cookie)).status).toBe(401);
    expect((await http(pub, 'GET', '/api/executions', undefined, cookie)).status).toBe(401);
    expect((await context.cookies(pub)).find((c) => c.name === 'svc_session')).toBeUndefined();
    await context.close();

    const logs = [...gw.logs, ...stack.logs].join('\n');
    expect(logs.includes(session!.value)).toBe(false);
    expect(logs.includes(codes[0])).toBe(false);
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/); // no JWT (ID or access token) anywhere
    expect(logs).toContain('"who":"session:alice"');
  }, 60_000);

  it('ends a session by GET /auth/logout only when the request shows it comes from here: another site\'s is refused (403) and the session stays', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page, 'nora');
    const sid = (await context.cookies(pub)).find((c) => c.name === 'svc_session')!.value;
    const cookie = { cookie: `svc_session=${sid}` };
    const signedIn = async () => (await http(pub, 'GET', '/auth/me', undefined, cookie)).status;
    const logoutGet = (headers: Record<string, string>) => fetch(`${pub}/auth/logout`, { headers: { ...cookie, ...headers }, redirect: 'manual' });

    // Another site (127.0.0.1 is not localhost's site) sends the browser to the logout address:
    // a top-level navigation carries the SameSite=Lax cookie, and its page sends no Referer.
    const evil = await startHttpTarget((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><meta name="referrer" content="no-referrer"><a id="out" href="${pub}/auth/logout">win a prize</a>`);
    });
    try {
      await page.goto(`${evil.url}/`, { waitUntil: 'domcontentloaded' });
      const [answer] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/logout'), page.click('#out')]);
      expect(answer.status()).toBe(403);
      expect(Object.keys(JSON.parse(await answer.text()))).toEqual(['detail']);
      expect((await answer.request().allHeaders())['sec-fetch-site']).toBe('cross-site');
      expect(await signedIn()).toBe(200);
      expect((await context.cookies(pub)).find((c) => c.name === 'svc_session')?.value).toBe(sid);
    } finally {
      await evil.close();
    }
    // The same without a browser's word: from another origin, or from nowhere (no Sec-Fetch-Site,
    // Origin or Referer, as an old browser sends with no-referrer), ends nothing either.
    const elsewhere: Record<string, string>[] = [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site', referer: 'http://evil.localhost/' }, { origin: 'http://evil.example.test' }, {}];
    for (const headers of elsewhere) {
      const res = await logoutGet(headers);
      expect(res.status).toBe(403);
      expect(Object.keys((await res.json()) as object)).toEqual(['detail']);
      expect(await signedIn()).toBe(200);
    }
    expect((await http(pub, 'POST', '/auth/logout', undefined, { ...cookie, origin: 'http://evil.example.test' })).status).toBe(403);
    expect((await http(pub, 'POST', '/auth/logout', undefined, cookie)).status).toBe(403);
    expect(await signedIn()).toBe(200);

    // A link followed on a page of this origin (the browser says Sec-Fetch-Site: same-origin; the
    // gateway's pages send no Referer) ends it, here and at the provider.
    await page.goto(`${pub}/auth/me`, { waitUntil: 'domcontentloaded' });
    const [ended] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/logout'),
      page.evaluate("location.assign('/auth/logout')"),
    ]);
    expect(ended.status()).toBe(302);
    expect((await ended.request().allHeaders())['sec-fetch-site']).toBe('same-origin');
    await page.waitForURL((u) => u.toString().startsWith(idp.issuer), { waitUntil: 'domcontentloaded' });
    expect(await signedIn()).toBe(401);
    await context.close();
  }, 60_000);

  it('gives a viewer reads only', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page, 'victor', '/auth/me');
    expect(JSON.parse((await page.textContent('body')) ?? '').roles).toEqual(['viewer']);
    await onConsole(page);
    expect((await inPage(page, 'GET', '/api/executions')).status).toBe(200);
    const refused = await inPage(page, 'POST', '/api/run/playbook', { path: 'gw/login' });
    expect(refused.status).toBe(403);
    expect(Object.keys(JSON.parse(refused.body))).toEqual(['detail']);
    await context.close();
  }, 60_000);

  it('returns after login only to a path here, however return_to is spelt', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const locations: string[] = [];
    page.on('response', (r) => {
      if (new URL(r.url()).pathname === '/auth/callback') locations.push(r.headers().location ?? '');
    });
    const loginReturningTo = async (returnTo: string) => {
      const callbacks = locations.length;
      await page.goto(`${pub}/auth/login?return_to=${encodeURIComponent(returnTo)}`, { waitUntil: 'domcontentloaded' });
      for (let i = 0; i < 4 && locations.length === callbacks; i++) {
        if (await page.locator('input[name=login]').count()) {
          await page.fill('input[name=login]', 'alice');
          await page.fill('input[name=password]', 'any-password');
        }
        // Sent to another host (there is no such one here), the navigation fails: the Location says where.
        await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }).catch(() => undefined), page.click('button[type=submit]')]);
      }
    };
    // A browser drops the tab: /\t/evil.example.test/ is //evil.example.test/, another host.
    await loginReturningTo('/\t/evil.example.test/');
    expect(locations).toEqual(['/']);
    expect(page.url()).toBe(`${pub}/`);
    // A path with characters a Location cannot hold is sent percent-encoded (not a 500).
    await loginReturningTo('/auth/me?x=€');
    expect(locations.at(-1)).toBe('/auth/me?x=%E2%82%AC');
    expect(JSON.parse((await page.textContent('body')) ?? '').sub).toBe('alice');
    await context.close();
  }, 60_000);

  it('derives the callback address from the hostname the request came in on', async () => {
    for (const origin of [pub, alt]) {
      const res = await fetch(`${origin}/auth/login`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location') ?? '');
      expect(to.origin).toBe(idp.issuer);
      expect(to.searchParams.get('redirect_uri')).toBe(`${origin}/auth/callback`);
      expect(to.searchParams.get('code_challenge_method')).toBe('S256');
      expect(res.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    }
  });

  it('refuses a callback with no login in progress', async () => {
    const res = await http(pub, 'GET', '/auth/callback?code=abc&state=def');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['detail']);
  });
});
