// A link to a version a catalog path does not have (a stale link, ?version=7 of a path at version
// 1) says so. The entry's page said "No playbook at PATH" of a playbook that is there, and the
// editor (Edit's link) showed the example playbook under "Edit PATH": registering it made a
// playbook at the example's path.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const ONE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: one, path: gui/audit/one }
workflow:
  - step: only
    tool: { name: o, kind: noop }
`;

describe('a version a catalog path does not have', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
    await stack.register(ONE);
  }, 300_000);
  afterAll(async () => ui?.close());

  it("is named on the entry's page, with a link to the newest", async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fone?version=7`);
    const alert = page.getByRole('alert').filter({ hasText: 'gui/audit/one has no version 7' });
    await alert.waitFor({ timeout: 10_000 });
    await alert.getByRole('link', { name: 'Its newest is version 1' }).click();
    await page.locator('svg.graph [data-step="only"]').waitFor({ timeout: 10_000 });
  }, 60_000);

  it('is named in the editor, not replaced by the example playbook', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/edit/gui%2Faudit%2Fone?version=7`);
    const alert = page.getByRole('alert').filter({ hasText: 'gui/audit/one has no version 7' });
    await alert.waitFor({ timeout: 10_000 });
    expect(await page.getByLabel('Playbook YAML').count()).toBe(0);
    await alert.getByRole('link', { name: 'Edit its newest version' }).click();
    await expect.poll(() => page.getByLabel('Playbook YAML').inputValue(), { timeout: 10_000 }).toBe(ONE);
  }, 60_000);
});
