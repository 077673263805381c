// The stuck-executions form kept a dry run's answer after the minutes changed or a search was
// refused: it then read "No execution has been running for more than <the new minutes> minutes"
// beside the 422, and "Cancel these N" sent the new minutes (other executions than those listed).
// A dry run's answer now keeps the minutes it searched and goes when they change or a search fails.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

describe('stuck executions: a dry run answer is not stale', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('drops the answer when the minutes change or the search is refused', async () => {
    await page.goto(`${stack.url}/ui/#/operations`);
    const panel = page.getByRole('region', { name: 'Stuck executions' });
    const minutes = panel.getByLabel('Running for more than (minutes)');
    await minutes.fill('1');
    await panel.getByRole('button', { name: 'Find (dry run)' }).click();
    await panel.getByText('No execution has been running for more than 1 minute.').waitFor({ timeout: 10_000 });
    await minutes.fill('30');
    expect(await panel.getByRole('status').count()).toBe(0);
    await minutes.fill('1000000000');
    await panel.getByRole('button', { name: 'Find (dry run)' }).click();
    await panel.getByRole('alert').waitFor({ timeout: 10_000 });
    expect(await panel.innerText()).not.toContain('No execution has been running');
  }, 60_000);
});
