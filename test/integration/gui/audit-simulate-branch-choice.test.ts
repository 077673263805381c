// Two branches of an inclusive `next` wait side by side in the console's simulator. Choosing the
// second's outcome did nothing: the simulation answered only the oldest waiting command and
// stopped at the first branch, so "error" on c left both asking, and the run that fails c while
// b still works (b cancelled, d never entered) could not be shown.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const BRANCHES = `apiVersion: svc/v1
kind: Playbook
metadata: { name: branches, path: gui/audit/branch-choice }
workflow:
  - step: start
    next:
      mode: inclusive
      arcs:
        - { step: b }
        - { step: c }
  - step: b
    tool: { name: b, kind: shell, command: "sleep 5" }
    next: d
  - step: c
    tool: { name: c, kind: shell, command: "exit 3" }
  - step: d
`;

describe('the simulator with branches side by side', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(BRANCHES);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('the branch answered goes on: c failing first fails the run as it does, b cancelled, d not reached', async () => {
    const id = await stack.run('gui/audit/branch-choice');
    expect(await stack.wait(id)).toMatchObject({ status: 'failed', error: { step: 'c' } });
    const entered = (await stack.events(id)).filter((e) => e.event_type === 'step.enter').map((e) => e.step);
    expect(entered).toEqual(['start', 'b', 'c']);

    const sim = simulatePlaybook(BRANCHES, { c: ['error'] }, { pauseWhenUndecided: true });
    expect(sim).toMatchObject({ status: 'failed', path: entered, waiting: [] });
    expect(sim.steps.b.status).toBe('cancelled');

    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/branch-choice`);
    await page.getByLabel('Simulate in the browser').check();
    const c = page.locator('.simulator fieldset', { hasText: 'c ends with' });
    await c.locator('button', { hasText: 'error' }).click();
    await page.getByText(/^Simulated execution failed\. c: simulated failure/).waitFor({ timeout: 5_000 });
    expect(await page.locator('.simulator fieldset').count()).toBe(0);
    expect(await page.locator('.simulator p.muted').innerText()).toBe('Path: start → b → c');
  }, 60_000);
});
