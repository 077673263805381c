// A `playbook` task's child paused by hand was drawn running in its parent's Gantt: its bar and
// details said `running` while the child's own page said paused, so nothing on the parent's page
// said why its step did not move on (a pause does not cascade). Now the bar is `paused` while the
// child is (its details say so), and running again once the child is resumed.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let stack: TestStack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 0 });
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: kid, path: gui/audit/child_paused/kid }
workflow:
  - step: gate
    wait: { signal: go }
`);
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: gui/audit/child_paused/parent }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: gui/audit/child_paused/kid }
`);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const post = (path: string, body: unknown = {}) => http(stack.url, 'POST', path, body);

it('draws a child paused by hand paused in its parent’s Gantt, then running once resumed', async () => {
  const id = await stack.run('gui/audit/child_paused/parent');
  const child = await until('the child waits', async () => {
    const [kid] = (await http(stack.url, 'GET', `/api/executions?parent=${id}`)).body.executions as Json[];
    return kid && ((await http(stack.url, 'GET', `/api/executions/${kid.execution_id}`)).body.waits as Json[]).length === 1 && Number(kid.execution_id);
  }, 10_000);
  expect((await post(`/api/executions/${child}/pause`)).status).toBe(200);

  await page.goto(`${stack.url}/ui/#/executions/${id}`);
  const bar = page.locator(`.gantt [data-kind="child"][data-child="${child}"]`);
  await expect.poll(() => bar.getAttribute('data-status'), { timeout: 10_000 }).toBe('paused');
  expect(await bar.getAttribute('aria-label')).toMatch(/, paused, open for /);
  await bar.click();
  await expect.poll(() => page.locator('.bar-details').textContent()).toMatch(/Child execution \d+ \(step start\) pausedStarted.*Endednot yet: it is paused until it is resumed on its own page/);

  // The parent's page reads its children's runs again while one is open.
  expect((await post(`/api/executions/${child}/resume`)).status).toBe(200);
  await expect.poll(() => bar.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
  expect((await post(`/api/executions/${child}/signals/go`, { payload: {} })).status).toBe(202);
  expect((await stack.wait(id, 10_000)).status).toBe('completed');
  await expect.poll(() => bar.getAttribute('data-status'), { timeout: 10_000 }).toBe('ok');
}, 60_000);
