// The operations page's "Cancel these N" cancelled whatever was stuck when it was clicked, not the
// N executions the dry run listed (docs/gui.md: "cancels exactly those"): it sent the cleanup again
// with the same minutes, so an execution that crossed the age between the dry run and the click
// was cancelled too, never shown to the operator. Real server and PostgreSQL; no worker, so the
// executions stay running; their start times are moved back in the database to make them stuck.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import type { TestStack } from '../../helpers/stack.ts';

const HANGS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: hangs, path: gui/audit/stuck-hangs }
workflow:
  - step: only
    tool: { name: n, kind: noop }
`;

describe('stuck executions: Cancel these N', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    stack = ui.stack;
    await stack.register(HANGS);
  }, 300_000);
  afterAll(async () => ui?.close());

  const age = (id: number) => stack.deps.db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = $1`, [id]);
  const statusOf = async (id: number) => (await http(stack.url, 'GET', `/api/executions/${id}`)).body.status as string;

  it('cancels the executions the dry run listed, not one that became stuck since', async () => {
    const { page } = ui;
    page.on('dialog', (d) => void d.accept());
    const listed = await stack.run('gui/audit/stuck-hangs');
    const later = await stack.run('gui/audit/stuck-hangs');
    await age(listed);
    await page.goto(`${stack.url}/ui/#/operations`);
    const panel = page.getByRole('region', { name: 'Stuck executions' });
    await panel.getByLabel('Running for more than (minutes)').fill('5');
    await panel.getByRole('button', { name: 'Find (dry run)' }).click();
    await panel.getByText('1 execution would be cancelled:').waitFor({ timeout: 10_000 });
    expect(await panel.locator('a.chip').allInnerTexts()).toEqual([String(listed)]);
    // Another execution crosses the age before the operator clicks.
    await age(later);
    await panel.getByRole('button', { name: 'Cancel these 1' }).click();
    const said = panel.getByRole('status').filter({ hasText: /^cancelled \d+ execution/i });
    await said.waitFor({ timeout: 10_000 });
    expect(await statusOf(listed)).toBe('cancelled');
    expect(await statusOf(later)).toBe('running');
    expect(await said.innerText()).toMatch(/^cancelled 1 execution\b/i);
  }, 60_000);
});
