// A link whose hash has a malformed escape (#/catalog/entry/%E0%A4%A, a URL cut short) threw
// URIError while the console rendered its route: the page went blank, and stayed blank on every
// page the user went to next, until reloaded. The part is now read as written: the page says
// nothing is there, and the console goes on working.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

describe('a link with a malformed escape', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  const errors: string[] = [];
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    page.on('pageerror', (e) => errors.push(String(e)));
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: here, path: gui/audit/malformed_link }
workflow:
  - step: only
    tool: { name: a, kind: noop }
`);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('says nothing is there, and the console goes on working', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/%E0%A4%A`);
    await expect.poll(async () => (await page.locator('main').allTextContents()).join(''), { timeout: 15_000 }).toBe('No playbook at gui/audit/%E0%A4%A.');
    await page.getByRole('link', { name: 'Catalog' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'gui/audit/malformed_link' }).count(), { timeout: 15_000 }).toBe(1);
    expect(errors).toEqual([]);
  }, 60_000);
});
