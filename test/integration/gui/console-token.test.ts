// SVC_AUTH=token: the console asks for an API token, refuses a wrong one, keeps the right one in
// memory only (no storage, no cookie; a reload asks again), and sends it with every API call.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../helpers/auth.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
let browser: Browser;
beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'token' } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('console with SVC_AUTH=token', () => {
  it('asks for a token, refuses a wrong one, keeps the right one in memory only', async () => {
    const token = await createApiToken(stack.deps.db, 'console-viewer', 'viewer');
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // The wrong token's refusal (401) is the test's; the browser logs it.
      if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(m.text());
    });
    const authorized: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) authorized.push(r.headers().authorization ?? '');
    });
    await page.goto(`${stack.url}/ui/`);
    const field = page.getByLabel('API token');
    await field.fill('svc_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('the server refused this token').waitFor();

    await field.fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    await page.getByText('No executions yet.').waitFor();
    expect(authorized.at(-1)).toBe(`Bearer ${token}`);

    const stored = await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie');
    expect(stored).not.toContain(token);
    expect(JSON.stringify(await page.context().cookies())).not.toContain(token);

    await page.reload();
    await page.getByLabel('API token').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
