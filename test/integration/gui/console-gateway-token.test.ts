// The console behind a gateway with no OpenID provider: no one logs in there, and only the
// server's API tokens get in (passed through as they came), so the console asks for one, as with
// SVC_AUTH=token, instead of stopping at the gateway's 401 from /auth/me.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../helpers/auth.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
let gw: TestGateway;
let browser: Browser;
beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  gw = await startTestGateway({ SVC_SERVER_URL: stack.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await stack?.close();
});

describe('console behind a gateway without an OpenID provider', () => {
  it('asks for an API token, works with it through the gateway, and asks again after Sign out', async () => {
    const token = await createApiToken(stack.deps.db, 'console-gw-viewer', 'viewer');
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const authorized: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) authorized.push(r.headers().authorization ?? '');
    });
    await page.goto(`${gw.url}/`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    await page.getByText('No executions yet.').waitFor();
    expect(authorized.length).toBeGreaterThan(0);
    expect(authorized.every((a) => a === `Bearer ${token}`)).toBe(true);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the server\'s own console (/ui/) behind a gateway asks for an API token too, which the server takes', async () => {
    const token = await createApiToken(stack.deps.db, 'console-server-viewer', 'viewer');
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${stack.url}/ui/`);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No executions yet.').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
