// Keyboard use of an execution's controls: the button pressed is disabled while its call runs and
// Pause, Resume and Cancel are then replaced by Resume, Pause and Retry. Focus fell to the page's
// body each time (document.activeElement was <body>), even when the server refused the action, so
// a keyboard or screen-reader user was left at the top of the page. It now goes back to the button
// pressed, or to the one that took its place.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const WAITER = `apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: gui/audit/controls-focus }
workflow:
  - step: hold
    wait: { signal: go, timeout: 600 }
`;

/** The focused element's tag and text ('BODY' when focus was lost). */
const focused = async (page: Page): Promise<string> =>
  String(await page.evaluate("(() => { const at = document.activeElement; return !at || at === document.body ? 'BODY' : at.tagName + ' ' + (at.textContent ?? '').trim(); })()"));

describe('focus after an execution control', () => {
  let ui: ConsolePage;
  let operator: string;
  let viewer: string;
  let id: number;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1, env: { SVC_AUTH: 'token' } });
    operator = await createApiToken(ui.stack.deps.db, 'focus-operator', 'operator');
    viewer = await createApiToken(ui.stack.deps.db, 'focus-viewer', 'viewer');
    const registered = await http(ui.stack.url, 'POST', '/api/catalog/register', { content: WAITER, resource_type: 'playbook' }, bearer(operator));
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const run = await http(ui.stack.url, 'POST', '/api/run/playbook', { path: 'gui/audit/controls-focus', payload: {} }, bearer(operator));
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    id = run.body.execution_id;
    ui.page.on('dialog', (d) => void d.accept());
  }, 300_000);
  afterAll(async () => ui?.close());

  const signIn = async (token: string) => {
    const { page, stack } = ui;
    await page.goto('about:blank');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.getByLabel('API token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('group', { name: 'Controls' }).getByRole('button', { name: 'Pause' }).waitFor();
  };

  it('stays on the button a refused action was pressed with', async () => {
    const { page } = ui;
    await signIn(viewer);
    await page.getByRole('button', { name: 'Pause' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: '403' }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Pause');
    await page.getByRole('button', { name: 'Cancel', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForTimeout(500);
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Cancel');
  }, 60_000);

  it('goes to the button that replaced the one pressed: Pause, Resume, Cancel', async () => {
    const { page } = ui;
    await signIn(operator);
    await page.getByRole('button', { name: 'Pause' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Resume');
    // The keyboard alone from here: Enter on what has focus.
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Pause');
    await page.getByRole('button', { name: 'Cancel', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Retry' }).waitFor();
    await expect.poll(() => focused(page), { timeout: 5_000 }).toBe('BUTTON Retry');
    expect((await http(ui.stack.url, 'GET', `/api/executions/${id}`, undefined, bearer(operator))).body.status).toBe('cancelled');
  }, 60_000);
});
