// The execution page drew its statechart from one read of the playbook, never tried again: when
// that read failed (the server away for a moment, a proxy's error) the page said "No graph for
// this playbook." for good, as if the playbook had none, though the execution itself was shown.
// It now says the statechart could not be read, and why, and draws it once a read succeeds.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

describe("an execution page whose playbook's read fails", () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: drawn, path: gui/audit/graph_read_failed }
workflow:
  - step: only
    tool: { name: a, kind: noop }
`);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('says the statechart could not be read, then draws it once the server answers', async () => {
    const id = await stack.run('gui/audit/graph_read_failed');
    expect((await stack.wait(id)).status).toBe('completed');
    // The catalog's reads do not reach the server, as when it is away; the execution's do.
    let away = true;
    await page.route('**/api/catalog/**', (route) => (away ? route.abort('connectionrefused') : route.continue()));
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const chart = page.getByRole('region', { name: 'Statechart' });
    await expect.poll(async () => (await chart.getByRole('alert').allTextContents()).join(''), { timeout: 15_000 }).toMatch(/^The statechart could not be read: The server cannot be reached/);
    expect(await chart.textContent()).not.toContain('No graph for this playbook');
    away = false;
    await expect.poll(() => chart.locator('svg.graph [data-step="only"]').getAttribute('data-status'), { timeout: 15_000 }).toBe('completed');
    expect(await chart.getByRole('alert').count()).toBe(0);
  }, 60_000);
});
