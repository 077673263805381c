// The run form generated from a playbook's `inputs:`: a control per input pre-filled from the
// defaults, required marks, an enum as a select, the description as help; a wrong type is refused
// in the page (no request reaches the server); a right one starts with typed values. Without
// `inputs:`, the JSON payload is pre-filled from the workload.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const TYPED = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: typed, path: form/typed }
workload: { limit: 10 }
inputs:
  limit: { type: integer, description: "how many rows to read" }
  mode: { type: string, enum: [fast, slow], default: slow }
  target: { type: string, required: true }
  verbose: { type: boolean }
  tags: { type: array }
workflow:
  - step: start
`;

const PLAIN = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: plain, path: form/plain }
workload: { who: world }
workflow:
  - step: start
`;

let t: TestApp;
let browser: Browser;
beforeAll(async () => {
  ensureGuiBuilt();
  t = await startTestApp();
  for (const content of [TYPED, PLAIN]) expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const executions = async () => Number((await t.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM core.execution`)).rows[0].n);

async function open(path: string): Promise<{ page: Page; starts: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const starts: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && /\/api\/(run\/playbook|execute)/.test(r.url())) starts.push(r.postData() ?? '');
  });
  await page.goto(`${t.url}/ui/#/catalog/entry/${encodeURIComponent(path)}`);
  await page.getByRole('button', { name: 'Run version 1' }).waitFor();
  return { page, starts, errors };
}

describe('the run form from inputs:', () => {
  it('refuses a wrong type in the page, sending nothing, then starts with typed values', async () => {
    const { page, starts, errors } = await open('form/typed');
    // Generated controls, pre-filled from the defaults (the workload's, then the inputs').
    expect(await page.getByLabel(/^limit/).inputValue()).toBe('10');
    expect(await page.getByLabel(/^mode/).evaluate((el) => el.tagName)).toBe('SELECT');
    expect(await page.getByLabel(/^mode/).inputValue()).toBe('slow');
    expect(await page.getByLabel(/^target/).getAttribute('aria-required')).toBe('true');
    const help = await page.getByLabel(/^limit/).getAttribute('aria-describedby');
    expect(await page.locator(`#${help}`).textContent()).toBe('how many rows to read');

    const before = await executions();
    await page.getByLabel(/^limit/).fill('ten');
    await page.getByLabel(/^target/).fill('db');
    await page.getByRole('button', { name: 'Run version 1' }).click();
    await page.getByRole('alert').filter({ hasText: 'workload.limit must be integer, got "ten"' }).waitFor();
    expect(await page.getByLabel(/^limit/).getAttribute('aria-invalid')).toBe('true');

    // A required field left empty is refused the same way.
    await page.getByLabel(/^limit/).fill('5');
    await page.getByLabel(/^target/).fill('');
    await page.getByRole('button', { name: 'Run version 1' }).click();
    await page.getByRole('alert').filter({ hasText: 'workload.target is required' }).waitFor();
    await page.getByLabel(/^tags/).fill('{"not": "a list"}');
    await page.locator('.run-field .error', { hasText: 'must be array (JSON)' }).waitFor();
    expect(starts).toEqual([]);
    expect(await executions()).toBe(before);

    await page.getByLabel(/^tags/).fill('["a", "b"]');
    await page.getByLabel(/^target/).fill('db');
    await page.getByLabel(/^verbose/).selectOption('true');
    await page.getByRole('button', { name: 'Run version 1' }).click();
    await page.waitForURL(/#\/executions\/\d+$/);
    expect(starts).toHaveLength(1);
    expect(JSON.parse(starts[0]).payload).toEqual({ limit: 5, mode: 'slow', target: 'db', verbose: true, tags: ['a', 'b'] });
    expect(await executions()).toBe(before + 1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the JSON payload for a playbook without inputs:, pre-filled from the workload', async () => {
    const { page, errors } = await open('form/plain');
    const field = page.getByLabel('Payload (JSON, merged into the workload)');
    expect(JSON.parse(await field.inputValue())).toEqual({ who: 'world' });
    expect(errors).toEqual([]);
    await page.close();
  });
});
