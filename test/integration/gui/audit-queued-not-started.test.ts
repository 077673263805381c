// A queued execution (held by its playbook's concurrency, no step begun) was drawn started: the
// statechart's start terminal green (completed), as for an execution whose first step ran, while
// its badge said queued. The start is now drawn pending until a step begins.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import type { TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

describe('a queued execution', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    // One at a time: the first waits for a signal, the second is queued behind it.
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: one, path: gui/audit/queued_not_started }
concurrency: { limit: 1 }
workflow:
  - step: hold
    wait: { signal: go }
`);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('draws its start pending until a step begins', async () => {
    const first = await stack.run('gui/audit/queued_not_started');
    await until('the first waits', async () => ((await http(stack.url, 'GET', `/api/executions/${first}`)).body.waits?.length ? true : undefined), 15_000);
    const second = await stack.run('gui/audit/queued_not_started');
    expect((await http(stack.url, 'GET', `/api/executions/${second}`)).body.status).toBe('queued');
    await page.goto(`${stack.url}/ui/#/executions/${second}`);
    const start = page.locator('svg.graph [data-node="start"]');
    await expect.poll(() => page.locator('svg.graph [data-step="hold"]').getAttribute('data-status'), { timeout: 15_000 }).toBe('pending');
    expect(await start.getAttribute('class')).toBe('terminal st-pending');

    // Admitted once the first ends: its step begins, and the start is drawn passed.
    expect((await http(stack.url, 'POST', `/api/executions/${first}/cancel`, {})).status).toBe(200);
    await expect.poll(() => page.locator('svg.graph [data-step="hold"]').getAttribute('data-status'), { timeout: 15_000 }).toBe('waiting');
    expect(await start.getAttribute('class')).toBe('terminal st-completed');
  }, 60_000);
});
