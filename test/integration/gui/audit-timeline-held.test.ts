// The Gantt of a queued execution in a real browser against a real server: the time it waited for
// room on its limit is a bar of its own (kind queued, labelled with the limit and key), running
// while it waits and ended when it is admitted, before the run of its first step. Before, the page
// said "Nothing has run yet." and, once admitted, the axis began with seconds of nothing.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let ex: ExecutionApi;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  ensureGuiBuilt();
  t = await startTestApp();
  ex = executionApi(t.url);
  expect((await http(t.url, 'PUT', '/api/limits/one', { concurrency: 1 })).status).toBeLessThan(300);
  await ex.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: timeline/held }
concurrency: { limit: one, key: "k" }
workflow:
  - step: start
    wait: { signal: go, timeout: 1h }
`);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (400|404)/.test(m.text())) consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const bars = (p: Page) =>
  p.$$eval('.gantt [data-bar]', (nodes) => nodes.map((n) => ({ kind: n.getAttribute('data-kind'), status: n.getAttribute('data-status'), label: n.closest('.gantt-row')!.querySelector('.gantt-label')!.textContent })));

it('draws the time a queued execution waited for room on its limit', async () => {
  const first = await ex.run('timeline/held');
  const second = await ex.run('timeline/held');
  expect((await http(t.url, 'GET', `/api/executions/${second}`)).body.status).toBe('queued');
  await page.goto(`${t.url}/ui/#/executions/${second}`);
  await until('the queued bar', async () => ((await bars(page)).some((b) => b.kind === 'queued') ? true : undefined), 20_000, 50);
  expect(await bars(page)).toEqual([{ kind: 'queued', status: 'running', label: 'queued on limit one, key k' }]);
  // The first ends: the second is admitted, its step runs (waits for its signal).
  expect((await http(t.url, 'POST', `/api/executions/${first}/signals/go`, { payload: {} })).status).toBe(202);
  await until('the second admitted', async () => ((await http(t.url, 'GET', `/api/executions/${second}`)).body.status === 'running' ? true : undefined), 20_000, 50);
  await until('its step drawn', async () => ((await bars(page)).some((b) => b.kind === 'step') ? true : undefined), 20_000, 50);
  const drawn = await bars(page);
  expect(drawn.map((b) => [b.kind, b.status])).toEqual([
    ['queued', 'ok'],
    ['step', 'running'],
    ['wait', 'running'],
  ]);
  expect(consoleErrors).toEqual([]);
});
