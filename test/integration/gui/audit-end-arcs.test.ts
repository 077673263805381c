// A step whose every arc has a `when` may end its branch: when none holds after it succeeded,
// the machine routes nowhere and the execution completes there (the `routed` guard). The
// statechart drawn from the server's chart (GET …/statechart, the console's reading whenever the
// route answers) drew no arc from such a step to `end`, while the YAML's reading did: an
// execution that completed after `check` showed `end` lit with no arc into it.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const ONLY_ON_ERROR = `apiVersion: svc/v1
kind: Playbook
metadata: { name: only_on_error, path: gui/audit/only_on_error }
workflow:
  - step: check
    tool: { name: t, kind: noop }
    next:
      - { step: repair, when: "{{ outcome.status == 'error' }}" }
  - step: repair
    tool: { name: t, kind: noop }
`;

describe('the arc to end of a step whose arcs all have a when', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(ONLY_ON_ERROR);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('is drawn, and taken by the execution that completed after check', async () => {
    const id = await stack.run('gui/audit/only_on_error');
    expect((await stack.wait(id)).status).toBe('completed');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="check"][data-status="completed"]').waitFor({ timeout: 15_000 });
    await page.locator('svg.graph [data-node="end"].st-completed').waitFor({ timeout: 15_000 });
    // start → check, check → repair (its when), check → end, repair → end.
    expect(await page.locator('svg.graph g.edge').count()).toBe(4);
    // Taken: start → check and check → end.
    expect(await page.locator('svg.graph g.edge.taken').count()).toBe(2);
  }, 60_000);

  it('in the catalog entry statechart and its simulation too', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/only_on_error`);
    await page.locator('svg.graph [data-step="check"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('svg.graph g.edge').count()).toBe(4);
    // The simulation of it: ok at check completes there, along start → check → end.
    await page.getByLabel('Simulate in the browser').check();
    await page.locator('.simulator fieldset button', { hasText: 'ok' }).first().click();
    await page.getByText('Simulated execution completed.').waitFor({ timeout: 5_000 });
    expect(await page.locator('.simulator svg.graph g.edge.taken').count()).toBe(2);
  }, 60_000);
});
