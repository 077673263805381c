// The console behind the real `svc gateway` with a real OpenID provider, driven in Chromium:
// unauthenticated users are sent through the provider's login pages, the signed-in user is shown,
// views hide what the role cannot do, and Sign out ends the gateway session.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { startConsoleStack, type ConsoleStack } from '../../helpers/console-stack.ts';
import type { TestGateway } from '../../helpers/gateway.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import type { TestProvider } from '../../helpers/oidc-provider.ts';
import type { TestStack } from '../../helpers/stack.ts';

const SECRET = 'gateway-secret-for-the-console-test-0123456789';
let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
let consoleStack: ConsoleStack | undefined;
let browser: Browser;
let pub: string;

beforeAll(async () => {
  ensureGuiBuilt();
  consoleStack = await startConsoleStack(SECRET);
  ({ idp, stack, gw, pub } = consoleStack);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await consoleStack?.close();
});

/** Opens the console at the gateway's `at` (`/` and a route) and signs `login` in through the provider's own pages. */
async function openSignedIn(context: BrowserContext, login: string, errors: string[], at = '/'): Promise<{ page: Page; visited: string[] }> {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    // Only the console's own pages count: the provider's dev login page links assets off this
    // machine (no network here). /auth/me answers 401 before login, by design; the browser logs it.
    if (!m.location().url.startsWith(pub)) return;
    if (m.type() === 'error' && !/status of (401|404)/.test(m.text())) errors.push(`${login}: ${m.text()}`);
  });
  const visited: string[] = [];
  page.on('request', (r) => {
    if (r.isNavigationRequest()) visited.push(r.url());
  });
  await page.goto(`${pub}${at}`, { waitUntil: 'domcontentloaded' });
  await page.waitForURL((u) => u.toString().startsWith(idp.issuer), { waitUntil: 'domcontentloaded' });
  for (let i = 0; i < 4 && !page.url().startsWith(pub); i++) {
    if (await page.locator('input[name=login]').count()) {
      await page.fill('input[name=login]', login);
      await page.fill('input[name=password]', 'any-password');
    }
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type=submit]')]);
  }
  return { page, visited };
}

describe('console behind the gateway', () => {
  it('logs in through the provider, shows the user, limits a viewer, signs out; an operator sees more', async () => {
    // Without the gateway's identity the API refuses (the console cannot skip authentication).
    expect((await fetch(`${stack.url}/api/executions`)).status).toBe(401);
    const errors: string[] = [];

    const viewerContext = await browser.newContext();
    const { page, visited } = await openSignedIn(viewerContext, 'victor', errors);
    await page.getByText('User victor (viewer)').waitFor();
    expect(visited.some((u) => u.startsWith(`${pub}/auth/login?`))).toBe(true);
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    await page.goto(`${pub}/#/catalog`);
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
    expect(await page.getByRole('link', { name: 'Register a playbook' }).count()).toBe(0);
    await page.goto(`${pub}/#/operations`);
    await page.getByRole('heading', { name: 'Worker pools' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Stuck executions' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'New credential' }).count()).toBe(0);

    // Sign out ends the session at the gateway (the old cookie opens nothing) and goes to the provider.
    const session = (await viewerContext.cookies(pub)).find((c) => c.name === 'svc_session');
    expect(session).toBeDefined();
    const cookie = { cookie: `svc_session=${session!.value}` };
    expect((await http(pub, 'GET', '/auth/me', undefined, cookie)).status).toBe(200);
    // Waiting from before the click, and as long as CI's load on a slow machine may take.
    const [signOut] = await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).pathname === '/auth/logout'),
      page.waitForURL((u) => u.toString().startsWith(idp.issuer), { waitUntil: 'domcontentloaded', timeout: 45_000 }),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    // By POST, whose Origin shows the gateway it comes from the console (not another site).
    expect(signOut.method()).toBe('POST');
    expect((await http(pub, 'GET', '/auth/me', undefined, cookie)).status).toBe(401);
    expect((await http(pub, 'GET', '/api/executions', undefined, cookie)).status).toBe(401);
    await viewerContext.close();

    const operatorContext = await browser.newContext();
    const operator = await openSignedIn(operatorContext, 'olivia', errors);
    await operator.page.getByText('User olivia (operator)').waitFor();
    await operator.page.goto(`${pub}/#/catalog`);
    await operator.page.getByRole('link', { name: 'Register a playbook' }).waitFor();
    expect(await operator.page.getByRole('form', { name: 'New credential' }).count()).toBe(0);
    await operatorContext.close();

    const adminContext = await browser.newContext();
    const admin = await openSignedIn(adminContext, 'alice', errors);
    await admin.page.getByText('User alice (admin)').waitFor();
    await admin.page.goto(`${pub}/#/operations`);
    await admin.page.getByRole('form', { name: 'New credential' }).waitFor();
    await adminContext.close();
    expect(errors).toEqual([]);
  }, 90_000);

  it('brings a person who followed a link back to the page it named once signed in', async () => {
    const errors: string[] = [];
    const context = await browser.newContext();
    const { page } = await openSignedIn(context, 'olivia', errors, '/#/catalog/new');
    await page.getByText('User olivia (operator)').waitFor();
    expect(page.url()).toBe(`${pub}/#/catalog/new`);
    await page.getByRole('heading', { name: 'Register a playbook' }).waitFor();
    await context.close();
    expect(errors).toEqual([]);
  }, 60_000);

  it('signs out for good when a view meets the ended session before the provider is reached', async () => {
    // The race CI met: the session ends at the gateway, a view's request then answers 401, and the
    // console sent the browser to log in, which the provider (its own session still open) completed.
    const errors: string[] = [];
    const context = await browser.newContext();
    const { page, visited } = await openSignedIn(context, 'victor', errors);
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    const before = visited.length;
    await page.route('**/auth/logout', async (route) => {
      const ended = await route.fetch();
      const [refused] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/api/') && r.status() === 401),
        page.evaluate("location.hash = '#/catalog'"),
      ]);
      expect(refused.status()).toBe(401);
      // Time for a navigation to log in to begin, had the 401 started one.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await route.fulfill({ response: ended });
    });
    await Promise.all([
      page.waitForURL((u) => u.toString().startsWith(idp.issuer), { waitUntil: 'domcontentloaded', timeout: 45_000 }),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(visited.slice(before).filter((u) => u.startsWith(`${pub}/auth/login`))).toEqual([]);
    await context.close();
    expect(errors).toEqual([]);
  }, 90_000);
});
