// Steps named like numbers ("10", "2") came first, in object key order: the execution page offered
// Retry from "2 (failed)", "10", "b" (playbook: b, 10, 2), Tab went through the statechart's boxes
// bottom up, and waiting branches "20" and "3" were listed (Waiting, the simulation's questions) "3"
// first. All follow the playbook's order now (GET …/state's step_order; the YAML's for the chart).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1 });
  // `2` fails, so the execution ends failed there and Retry offers the steps it reached.
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: numbered, path: gui/audit/step_order }
workflow:
  - step: b
    tool: { name: a, kind: noop }
    next: "10"
  - step: "10"
    tool: { name: a, kind: noop }
    next: "2"
  - step: "2"
    loop: { in: "{{ 'not a list' }}" }
    tool: { name: a, kind: noop }
`);
  // Two branches that wait side by side, `20` first in the playbook.
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: side, path: gui/audit/step_order_waits }
workflow:
  - step: a
    tool: { name: a, kind: noop }
    next: { mode: inclusive, arcs: [ { step: "20" }, { step: "3" } ] }
  - step: "20"
    wait: { signal: go }
  - step: "3"
    wait: { signal: go }
`);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** The statechart's steps in the order Tab reaches them, from the first box on. */
async function tabOrder(): Promise<string[]> {
  const boxes = page.locator('svg.graph [data-step]');
  await expect.poll(() => boxes.count(), { timeout: 15_000 }).toBe(3);
  await boxes.first().focus();
  const order: string[] = [];
  for (let i = 0; i < 3; i++) {
    order.push((await page.locator(':focus').getAttribute('data-step')) ?? '');
    await page.keyboard.press('Tab');
  }
  return order;
}

it('offers Retry from the steps in playbook order, and tabs through the statechart so', async () => {
  const id = await stack.run('gui/audit/step_order');
  expect((await stack.wait(id)).status).toBe('failed');
  await page.goto(`${stack.url}/ui/#/executions/${id}`);
  const select = page.getByLabel('Retry from step');
  await expect.poll(() => select.inputValue(), { timeout: 15_000 }).toBe('2');
  expect(await select.locator('option').evaluateAll((os) => os.map((o) => o.getAttribute('value')))).toEqual(['b', '10', '2']);
  expect(await tabOrder()).toEqual(['b', '10', '2']);
}, 60_000);

it('tabs through the catalog entry\'s statechart in playbook order', async () => {
  await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/step_order`);
  expect(await tabOrder()).toEqual(['b', '10', '2']);
}, 60_000);

it('lists the steps that wait, on the execution page and in the simulation, in playbook order', async () => {
  const id = await stack.run('gui/audit/step_order_waits');
  await page.goto(`${stack.url}/ui/#/executions/${id}`);
  const waits = page.locator('ul.waits > li');
  await expect.poll(() => waits.count(), { timeout: 15_000 }).toBe(2);
  expect(await waits.evaluateAll((ls) => ls.map((l) => l.getAttribute('aria-label')))).toEqual(['wait of 20', 'wait of 3']);

  await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/step_order_waits`);
  await page.getByLabel('Simulate in the browser').check();
  await page.getByRole('button', { name: 'ok' }).click();
  await expect.poll(() => page.locator('.sim-step legend').allTextContents()).toEqual(['20 waits for signal go', '3 waits for signal go']);
}, 60_000);
