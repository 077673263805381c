// The statechart draws thick only the arcs an execution took. It drew every arc whose two steps
// ran, so a fallback arc beside the path (approve → done, when the execution went approve → fix
// → done) read as taken. Arcs are now the entries of the log: a step entered from its source.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const DETOUR = `apiVersion: svc/v1
kind: Playbook
metadata: { name: detour, path: gui/audit/detour }
workflow:
  - step: approve
    tool: { name: a, kind: noop }
    next: [ { step: fix, when: "{{ outcome.status == 'ok' }}" }, { step: done } ]
  - step: fix
    tool: { name: f, kind: noop }
    next: done
  - step: done
    tool: { name: d, kind: noop }
`;

describe('the arcs an execution took', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(DETOUR);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('are start → approve → fix → done → end, not the fallback approve → done', async () => {
    const id = await stack.run('gui/audit/detour');
    expect((await stack.wait(id)).status).toBe('completed');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="done"][data-status="completed"]').waitFor({ timeout: 15_000 });
    // Five arcs drawn (start→approve, approve→fix, approve→done, fix→done, done→end): four taken.
    expect(await page.locator('svg.graph g.edge').count()).toBe(5);
    expect(await page.locator('svg.graph g.edge.taken').count()).toBe(4);
  }, 60_000);

  it('in the simulation too: ok at each step goes approve → fix → done, and only those arcs are thick', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/detour`);
    await page.getByLabel('Simulate in the browser').check();
    for (let i = 0; i < 3; i++) await page.locator('.simulator fieldset button', { hasText: 'ok' }).first().click();
    await page.getByText('Simulated execution completed.').waitFor({ timeout: 5_000 });
    expect(await page.locator('.simulator p.muted').innerText()).toBe('Path: approve → fix → done');
    expect(await page.locator('.simulator svg.graph g.edge.taken').count()).toBe(4);
  }, 60_000);

  it('asks a loop step\'s outcome item by item, saying which item', async () => {
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: items, path: gui/audit/items }
workflow:
  - step: each
    loop: { in: "{{ [1, 2, 3] }}", iterator: n }
    tool: { name: t, kind: noop }
`);
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/items`);
    await page.getByLabel('Simulate in the browser').check();
    const legends: string[] = [];
    for (let i = 0; i < 3; i++) {
      legends.push(await page.locator('.simulator fieldset legend').innerText());
      await page.locator('.simulator fieldset button', { hasText: 'ok' }).click();
    }
    expect(legends).toEqual(['each: item 0 (1 of 3) ends with', 'each: item 1 (2 of 3) ends with', 'each: item 2 (3 of 3) ends with']);
    await page.getByText('Simulated execution completed.').waitFor({ timeout: 5_000 });
  }, 60_000);
});
