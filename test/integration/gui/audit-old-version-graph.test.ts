// An execution of an old version of a playbook is drawn from that version. The console looked for
// the execution's catalog entry among the 25 versions before the newest only, one request each,
// and past them drew the newest version's steps: the execution of a playbook edited 30 times
// showed steps it never had, and Retry offered them.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const FIRST = `apiVersion: svc/v1
kind: Playbook
metadata: { name: edited, path: gui/audit/edited }
workflow:
  - step: alpha
    tool: { name: a, kind: noop }
`;
const revision = (n: number) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: edited, path: gui/audit/edited }
# revision ${n}
workflow:
  - step: beta
    tool: { name: b, kind: noop }
`;

describe('the statechart of an execution of an old version', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('draws the steps of the version it ran, however many versions came after', async () => {
    await stack.register(FIRST);
    const id = await stack.run('gui/audit/edited');
    expect((await stack.wait(id)).status).toBe('completed');
    for (let n = 2; n <= 30; n++) await stack.register(revision(n));

    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="alpha"][data-status="completed"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('svg.graph [data-step="beta"]').count()).toBe(0);
    expect(await page.getByLabel('Retry from step').locator('option').allTextContents()).toEqual(['alpha']);
  }, 60_000);
});
