// A step the execution never entered (skipped: a branch not taken) is not drawn as a cancelled
// one. The statechart filled skipped boxes with the cancelled grey and its legend had no
// `skipped`, so the branch an approval did not take (rejected, expired) read as cancelled steps
// of a completed execution.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import type { TestStack } from '../../helpers/stack.ts';

const BRANCH = `apiVersion: svc/v1
kind: Playbook
metadata: { name: branch, path: gui/audit/branch }
workflow:
  - step: decide
    tool: { name: d, kind: noop }
    next: [ { step: taken, when: "{{ outcome.status == 'ok' }}" }, { step: other } ]
  - step: taken
    tool: { name: t, kind: noop }
  - step: other
    tool: { name: o, kind: noop }
`;
const NAP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: nap, path: gui/audit/nap }
workflow:
  - step: nap
    wait: { for: 1h }
`;

const fillOf = (p: Page, step: string) =>
  p.locator(`svg.graph [data-step="${step}"] rect`).evaluate((r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill);

describe('a skipped step in the statechart', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    for (const yaml of [BRANCH, NAP]) await stack.register(yaml);
  }, 300_000);
  afterAll(async () => ui?.close());

  it("is drawn apart from a cancelled step, and the legend names it", async () => {
    const branched = await stack.run('gui/audit/branch');
    expect((await stack.wait(branched)).status).toBe('completed');
    const napping = await stack.run('gui/audit/nap');
    await until('the nap is waiting', async () => (await stack.events(napping)).some((e) => e.event_type === 'timer.set'), 10_000);
    const cancelled = await http(stack.url, 'POST', `/api/executions/${napping}/cancel`, {});
    expect(cancelled.status).toBe(200);
    expect((await stack.wait(napping)).status).toBe('cancelled');

    await page.goto(`${stack.url}/ui/#/executions/${napping}`);
    await page.locator('svg.graph [data-step="nap"][data-status="cancelled"]').waitFor({ timeout: 15_000 });
    const cancelledFill = await fillOf(page, 'nap');

    await page.goto(`${stack.url}/ui/#/executions/${branched}`);
    await page.locator('svg.graph [data-step="other"][data-status="skipped"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('svg.graph [data-step="taken"]').getAttribute('data-status')).toBe('completed');
    expect(await fillOf(page, 'other')).not.toBe(cancelledFill);
    expect(await page.getByRole('list', { name: 'Legend' }).getByRole('listitem').allTextContents()).toContainEqual(expect.stringContaining('skipped'));
  }, 60_000);
});
