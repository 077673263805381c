// The editor shows what the server warns of when it registers a playbook. The registration's answer
// carries `warnings` (a step no path reaches, …), which `svc catalog register` prints; the editor
// went to the catalog entry at once and the warnings were never shown anywhere in the console.
// And a refused one's problems say their column as the server gives it (DESIGN.md: every problem
// has line and column), not the line alone: on a line of several fields it tells which is meant.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const ORPHAN = `apiVersion: svc/v1
kind: Playbook
metadata: { name: orphan, path: gui/audit/orphan }
workflow:
  - step: a
    tool: { name: a, kind: noop }
  - step: orphan
    tool: { name: o, kind: noop }
`;
// The unknown field is on line 6, after two other fields of its mapping.
const BOGUS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: bogus, path: gui/audit/bogus }
workflow:
  - step: a
    tool: { name: a, kind: noop, bogus: 1 }
`;

describe('the editor', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  const errors: string[] = [];
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
    page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
    page.on('pageerror', (e) => errors.push(e.message));
  }, 300_000);
  afterAll(async () => ui?.close());

  it("shows a registration's warnings, then opens the entry from its link", async () => {
    await page.goto(`${stack.url}/ui/#/catalog/new`);
    await page.getByLabel('Playbook YAML').fill(ORPHAN);
    await page.getByRole('button', { name: 'Register' }).click();
    const warned = page.getByRole('status').filter({ hasText: 'Registered gui/audit/orphan version 1, with 1 warning' });
    await warned.waitFor({ timeout: 10_000 });
    expect(await warned.getByRole('listitem').allTextContents()).toEqual([expect.stringContaining('no path reaches step orphan')]);
    await warned.getByRole('link', { name: 'Open gui/audit/orphan version 1' }).click();
    await page.waitForURL(/#\/catalog\/entry\/gui%2Faudit%2Forphan\?version=1$/);
    await page.locator('svg.graph [data-step="orphan"]').waitFor();
    expect(errors).toEqual([]);
  }, 60_000);

  it("says each problem's line and column", async () => {
    await page.goto(`${stack.url}/ui/#/catalog/new`);
    await page.getByLabel('Playbook YAML').fill(BOGUS);
    await page.getByRole('button', { name: 'Register' }).click();
    const problem = page.locator('.problems li').filter({ hasText: 'bogus' });
    await problem.waitFor({ timeout: 10_000 });
    expect(await problem.getAttribute('data-line')).toBe('6');
    expect(await problem.getAttribute('data-column')).toBe(String(BOGUS.split('\n')[5].indexOf('bogus') + 1));
    expect(await problem.textContent()).toContain(`line 6, column ${BOGUS.split('\n')[5].indexOf('bogus') + 1}`);
    expect(await page.locator('.yl.has-problem[data-line="6"]').count()).toBe(1);
  }, 60_000);
});
