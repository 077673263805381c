// Buttons that go away when pressed: "Show all events" (the step's filter it clears), the Gantt's
// "show all (N more rows)" of a long loop, and the executions list's "Older executions" of its
// last page. Pressed from the keyboard, each left focus on the page's body (Tab started again from
// the top). Focus now goes to the statechart's step the filter was of, and to the first row shown.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const LOOP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: rows, path: gui/audit/focus-show-all }
workflow:
  - step: each
    loop: { in: "{{ range(80) | list }}", iterator: n, mode: parallel, max_in_flight: 20 }
    tool: { name: t, kind: noop }
`;

/** The focused element: 'BODY' when focus was lost, else its tag and the attribute `name` of it. */
const focused = async (page: Page, name: string): Promise<string> =>
  String(await page.evaluate(`(() => { const at = document.activeElement; return !at || at === document.body ? 'BODY' : at.tagName + ' ' + at.getAttribute(${JSON.stringify(name)}); })()`));

describe('focus after a button that goes', () => {
  let ui: ConsolePage;
  let id: number;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1, concurrency: 8 });
    await ui.stack.register(LOOP);
    id = await ui.stack.run('gui/audit/focus-show-all');
    expect((await ui.stack.wait(id)).status).toBe('completed');
  }, 300_000);
  afterAll(async () => ui?.close());

  it('Show all events: back to the step', async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph g[data-step="each"]').focus();
    await page.keyboard.press('Enter');
    const showAll = page.getByRole('button', { name: 'Show all events' });
    await showAll.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Timeline', exact: true }).waitFor();
    await expect.poll(() => focused(page, 'data-step'), { timeout: 5_000 }).toBe('g each');
  }, 60_000);

  it("the Gantt's show all: to the first row shown", async () => {
    const { page, stack } = ui;
    await page.goto('about:blank');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const more = page.getByRole('button', { name: /^show all \(\d+ more rows\)$/ });
    await more.focus();
    await page.keyboard.press('Enter');
    await more.waitFor({ state: 'detached' });
    // Sixty rows were drawn under the step: the sixty-first is the first shown now.
    const sixtyFirst = await page.locator('.gantt-rows > li').nth(61).locator('button.gantt-bar').getAttribute('data-bar');
    await expect.poll(() => focused(page, 'data-bar'), { timeout: 5_000 }).toBe(`BUTTON ${sixtyFirst}`);
  }, 60_000);

  it("the executions list's Older executions, on its last page: to the first row added", async () => {
    const { page, stack } = ui;
    // Fifty a page: the first execution is alone on the second, and last, page.
    for (let i = 0; i < 50; i++) await stack.run('gui/audit/focus-show-all');
    await page.goto(`${stack.url}/ui/#/executions`);
    await page.locator('table.list tbody tr').nth(49).waitFor();
    const older = page.getByRole('button', { name: 'Older executions' });
    await older.focus();
    await page.keyboard.press('Enter');
    await older.waitFor({ state: 'detached' });
    expect(await page.locator('table.list tbody tr').count()).toBe(51);
    await expect.poll(() => focused(page, 'href'), { timeout: 5_000 }).toBe(`A #/executions/${id}`);
  }, 120_000);
});
