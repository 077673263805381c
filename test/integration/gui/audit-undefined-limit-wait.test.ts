// An execution whose work waits on a limit that is named but not defined waits until one is
// defined (docs/flow-control.md, Caveats): GET /api/executions/{id} says `defined: false` in its
// `flow` and in each of its `limit_waits`, and `svc status` adds "(not defined: its work waits
// until it is)". The execution page said "queued on limit …" and "room on limit …" as for a full
// limit, so an operator waited for room that never comes. Real server, worker and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import type { TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const TASK_LIMIT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: task_limit, path: gui/audit/undefined-task-limit }
workflow:
  - step: call
    tool: { name: t, kind: noop, limit: { name: gui-audit-nobody-defined } }
`;
const QUEUED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: queued, path: gui/audit/undefined-concurrency }
concurrency: { limit: gui-audit-nobody-defined-either }
workflow:
  - step: only
    tool: { name: t, kind: noop }
`;

describe('work waiting on a limit nobody defined', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    stack = ui.stack;
    await stack.register(TASK_LIMIT);
    await stack.register(QUEUED);
  }, 300_000);
  afterAll(async () => ui?.close());

  it("a task's command: the wait says the limit is not defined", async () => {
    const { page } = ui;
    const id = await stack.run('gui/audit/undefined-task-limit');
    await until('limit wait', async () => ((await http(stack.url, 'GET', `/api/executions/${id}`)).body.limit_waits ?? []).length === 1, 30_000, 200);
    expect((await http(stack.url, 'GET', `/api/executions/${id}`)).body.limit_waits[0]).toMatchObject({ limit: 'gui-audit-nobody-defined', defined: false });
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const wait = page.getByRole('listitem', { name: 'limit wait of call' });
    await wait.waitFor({ timeout: 15_000 });
    const text = await wait.innerText();
    expect(text).toContain('gui-audit-nobody-defined');
    expect(text).toContain('not defined');
    expect(text).not.toMatch(/room on limit/);
  }, 60_000);

  it('a queued execution: its admission says the limit is not defined', async () => {
    const { page } = ui;
    const id = await stack.run('gui/audit/undefined-concurrency');
    const flow = (await http(stack.url, 'GET', `/api/executions/${id}`)).body.flow;
    expect(flow).toMatchObject({ limit: 'gui-audit-nobody-defined-either', defined: false, admitted_at: null });
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const fact = page.locator('dd.flow');
    await fact.waitFor({ timeout: 15_000 });
    expect(await fact.innerText()).toContain('not defined');
  }, 60_000);
});
