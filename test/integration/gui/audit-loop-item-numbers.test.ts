// A loop item has one number across the product: its index from 0 (`loop_index` in the API, the
// step's `loop.index`, `svc logs` "item 0", and the error a failed item ends its step with, "item
// 1: ..." for the second, from the one statechart the runtime, svc simulate and the console's
// simulator share). The Gantt labels its commands so; the console's simulator asked for "item 2
// of 3" and then failed with "item 1: failed".
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const LOOP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: items, path: gui/audit/item-numbers }
workflow:
  - step: each
    loop: { in: "{{ [1, 2, 3] }}", iterator: n, mode: sequential }
    tool: { name: t, kind: shell, command: "test {{ n }} -ne 2" }
`;

describe('loop item numbers', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(LOOP);
  }, 300_000);
  afterAll(async () => ui?.close());

  it("the Gantt names a failed item as the step's error does", async () => {
    const id = await stack.run('gui/audit/item-numbers');
    expect((await stack.wait(id)).status).toBe('failed');
    const error = (await http(stack.url, 'GET', `/api/executions/${id}`)).body.error;
    expect(error.message).toMatch(/^item 1: /);
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const label = page.locator('.gantt-row', { has: page.locator('.gantt-bar[data-kind="command"][data-loop-index="1"]') }).locator('.gantt-label');
    await label.waitFor({ timeout: 10_000 });
    expect(await label.innerText()).toMatch(/^item 1\b/);
  }, 60_000);

  it('the simulator asks for the item its error then names', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/item-numbers`);
    await page.getByLabel('Simulate in the browser').check();
    const legend = page.locator('.simulator fieldset legend');
    expect(await legend.innerText()).toBe('each: item 0 (1 of 3) ends with');
    await page.locator('.simulator fieldset button', { hasText: 'ok' }).click();
    expect(await legend.innerText()).toBe('each: item 1 (2 of 3) ends with');
    await page.locator('.simulator fieldset button', { hasText: 'error' }).click();
    await page.getByText(/^Simulated execution failed\. each: item 1: /).waitFor({ timeout: 5_000 });
  }, 60_000);
});
