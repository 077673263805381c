// The console's graph named its start and end boxes '__start' and '__end', names a step may have
// too (the DSL refuses only '__proto__' and names starting with '#'): a playbook with steps
// '__end' → '__start' was drawn with its steps merged into the terminals (the layout keeps one
// node per id), so a step box went missing and an execution's path could not be read. The
// terminals are now '#start' and '#end', which no step can be named.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const NAMED_LIKE_TERMINALS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: terminal_names, path: gui/audit/terminal_names }
workflow:
  - step: __end
    tool: { name: t, kind: noop }
    next: __start
  - step: __start
    tool: { name: t, kind: noop }
`;

describe('steps named like the graph start and end', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(NAMED_LIKE_TERMINALS);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('are drawn as two steps beside the start and end, on the execution they ran in', async () => {
    const id = await stack.run('gui/audit/terminal_names');
    expect((await stack.wait(id)).status).toBe('completed');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="__start"][data-status="completed"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('svg.graph [data-step="__end"][data-status="completed"]').count()).toBe(1);
    expect(await page.locator('svg.graph [data-node="start"]').count()).toBe(1);
    expect(await page.locator('svg.graph [data-node="end"]').count()).toBe(1);
    // start → __end → __start → end, every one taken.
    expect(await page.locator('svg.graph g.edge').count()).toBe(3);
    expect(await page.locator('svg.graph g.edge.taken').count()).toBe(3);
  }, 60_000);
});
