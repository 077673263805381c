// Keyboard use across the console: a button disabled while its call runs lost focus to the page's
// body (document.activeElement was <body>) after Register (refused with problems), a trigger's
// Pause, and Send of a signal; so did answering a step in the simulator (the next step's question
// was a new fieldset). A keyboard user was put back at the top of the page each time. Focus now
// stays on the button (Pause's becomes Resume), moves to the next question's button, or to what
// the delivered signal's message says.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: focus, path: gui/audit/focus-after }
triggers:
  - { name: nightly, kind: schedule, cron: "30 3 * * *" }
workflow:
  - step: a
    tool: { name: t, kind: noop }
    next: b
  - step: b
    tool: { name: t, kind: noop }
    next: c
  - step: c
    wait: { signal: go }
`;

/** The focused element's tag and text ('BODY' when focus was lost). */
const focused = async (page: Page): Promise<string> =>
  String(await page.evaluate("(() => { const at = document.activeElement; return !at || at === document.body ? 'BODY' : at.tagName + ' ' + (at.textContent ?? '').trim(); })()"));

describe('focus after an action', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    await ui.stack.register(PLAYBOOK);
    ui.page.on('dialog', (d) => void d.accept());
  }, 300_000);
  afterAll(async () => ui?.close());

  it('stays on Register when the server lists problems', async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/catalog/new`);
    await page.getByLabel('Playbook YAML').fill('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: p, path: gui/audit/focus-bad }\nworkflow:\n  - step: a\n    bogus: 1\n');
    await page.getByRole('button', { name: 'Register' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('.problems li').first().waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Register');
  }, 60_000);

  it("stays on a trigger's Pause, become Resume", async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/triggers`);
    await page.getByRole('button', { name: /^Pause nightly/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: /^Resume nightly/ }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Resume');
  }, 60_000);

  it("moves to the simulator's next question", async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/focus-after`);
    await page.getByLabel('Simulate in the browser').check();
    const legend = page.locator('.simulator fieldset legend');
    await page.locator('.simulator fieldset button', { hasText: 'ok' }).focus();
    await page.keyboard.press('Enter');
    expect(await legend.innerText()).toBe('b ends with');
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON ok');
    // The keyboard alone from here: Enter answers b, then c's signal.
    await page.keyboard.press('Enter');
    expect(await legend.innerText()).toBe('c waits for signal go');
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON signal arrives');
    // The last answer ends the simulation and its question goes: Restart takes the focus.
    await page.keyboard.press('Enter');
    await page.getByText('Simulated execution completed.').waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Restart');
    await page.keyboard.press('Enter');
    expect(await legend.innerText()).toBe('a ends with');
  }, 60_000);

  it('moves to what "Cancel these N" did', async () => {
    const { page, stack } = ui;
    // Held at its signal; its start moved back in the database to make it stuck.
    const id = await stack.run('gui/audit/focus-after');
    await stack.deps.db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = $1`, [id]);
    await page.goto(`${stack.url}/ui/#/operations`);
    const panel = page.getByRole('region', { name: 'Stuck executions' });
    await panel.getByLabel('Running for more than (minutes)').fill('5');
    await panel.getByRole('button', { name: 'Find (dry run)' }).click();
    const cancel = panel.getByRole('button', { name: 'Cancel these 1' });
    await cancel.focus();
    await page.keyboard.press('Enter');
    await panel.getByRole('status').filter({ hasText: /^cancelled 1 execution/ }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toMatch(/^P cancelled 1 execution of the 1 listed/);
    expect((await stack.wait(id)).status).toBe('cancelled');
  }, 60_000);

  it("moves to what a limit's Save of a new name, and its Delete, did", async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/operations`);
    const panel = page.getByRole('region', { name: 'Limits' });
    const form = page.getByRole('form', { name: 'Set limit' });
    await form.getByLabel('Name').fill('focus_slot');
    await form.getByLabel('Concurrency (per key)').fill('2');
    await form.getByRole('button', { name: 'Save' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/operations\?limit=focus_slot$/);
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('P Limit focus_slot created.');
    await form.getByRole('button', { name: 'Delete focus_slot' }).focus();
    await page.keyboard.press('Enter');
    await panel.getByRole('status').filter({ hasText: 'Limit focus_slot deleted.' }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('P Limit focus_slot deleted.');
  }, 60_000);

  it('moves to what a delivered signal says', async () => {
    const { page, stack } = ui;
    const id = await stack.run('gui/audit/focus-after');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.getByRole('button', { name: 'Send go' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('Signal go delivered').waitFor();
    expect((await stack.wait(id)).status).toBe('completed');
    await expect.poll(() => focused(page), { timeout: 5_000 }).toMatch(/^P Signal go delivered to step c/);
  }, 60_000);
});
