// A `playbook` task's child held by its playbook's concurrency was drawn running from its start:
// the Gantt's bar and its details said `running`, `Started 15:07:40.430`, where the step route
// answers the run `queued` with started_at null; once admitted, its queue was drawn as run time.
// Now the bar is `queued` ("not yet" started) while it waits, then runs from its admission.
// Each kid waits for a signal, not a timer: a loaded machine drew the page after a 2 s nap ended.
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
  // One kid at a time: the second item's child waits for the first's to end.
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: kid, path: gui/audit/child_queued/kid }
concurrency: { limit: 1 }
workflow:
  - step: start
    wait: { signal: go }
`);
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: gui/audit/child_queued/parent }
workflow:
  - step: start
    loop: { in: "{{ [0, 1] }}", iterator: n, mode: parallel }
    tool: { name: kid, kind: playbook, path: gui/audit/child_queued/kid }
`);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const runs = async (id: number): Promise<Json[]> => (await http(stack.url, 'GET', `/api/executions/${id}/steps/start`)).body.runs;

it('draws a queued child queued, then running from its admission', async () => {
  const id = await stack.run('gui/audit/child_queued/parent');
  const queued = await until('a child queued', async () => (await runs(id)).find((r) => r.status === 'queued'), 15_000, 50);
  expect(queued.started_at).toBeNull();
  await page.goto(`${stack.url}/ui/#/executions/${id}`);
  const bar = page.locator(`.gantt [data-kind="child"][data-child="${queued.child_execution_id}"]`);
  await expect.poll(() => bar.getAttribute('data-status'), { timeout: 10_000 }).toBe('queued');
  expect(await bar.getAttribute('aria-label')).toMatch(/, queued, queued for /);
  await bar.click();
  const details = page.locator('.bar-details');
  await expect.poll(() => details.textContent()).toMatch(/Startednot yet: queued on its playbook’s concurrency limit since \d/);

  // The first kid goes after the second has queued over a second; then the second, admitted, goes.
  const first = (await runs(id)).find((r) => r.child_execution_id !== queued.child_execution_id)!;
  await until('the second kid queued over a second', async () => Date.now() - Date.parse(queued.issued_at) > 1_200, 5_000, 50);
  expect((await http(stack.url, 'POST', `/api/executions/${first.child_execution_id}/signals/go`, {})).status).toBe(202);
  await until('the second kid admitted', async () => (await runs(id)).find((r) => r.child_execution_id === queued.child_execution_id)?.status === 'running', 15_000, 50);
  expect((await http(stack.url, 'POST', `/api/executions/${queued.child_execution_id}/signals/go`, {})).status).toBe(202);
  expect((await stack.wait(id, 30_000)).status).toBe('completed');
  const admitted = (await runs(id)).find((r) => r.child_execution_id === queued.child_execution_id)!;
  expect(Date.parse(admitted.started_at) - Date.parse(admitted.issued_at)).toBeGreaterThan(1_000);
  await page.reload();
  await expect.poll(() => bar.getAttribute('data-start'), { timeout: 10_000 }).toBe(new Date(Date.parse(admitted.started_at)).toISOString());
  expect(await bar.getAttribute('data-status')).toBe('ok');
  const lead = page.locator(`.gantt-row:has([data-child="${queued.child_execution_id}"]) .gantt-queued`);
  expect(await lead.getAttribute('title')).toMatch(/^queued on its playbook’s concurrency limit for \d\.\d s before it started$/);
  await bar.click();
  expect(await page.locator('.bar-details').textContent()).toMatch(/Queued\d\.\d s \(queued on its playbook’s concurrency limit, from \d/);
  expect(await page.locator('main').textContent()).not.toContain('NaN');
}, 90_000);
