// Re-run starts the version the execution ran, as Retry does ("the same version and payload"):
// it sent the path alone, so a playbook registered again meanwhile ran its newest version, other
// steps and all, with the old version's merged workload as payload. And with what the start
// asked for, as a retry is: it sent the payload alone, so the new execution lost the labels that
// label filters find it by, and its priority.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const version = (step: string, who: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: rerun, path: gui/audit/rerun }
workload: { who: ${who} }
workflow:
  - step: ${step}
    tool: { name: o, kind: noop }
`;

describe('Re-run of an execution of an older version', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('runs that version, not the newest', async () => {
    const v1 = (await stack.register(version('first', 'one'))).catalog_id;
    const old = await stack.run('gui/audit/rerun');
    await stack.wait(old);
    const v2 = (await stack.register(version('second', 'two'))).catalog_id;
    expect(v2).not.toBe(v1);
    await page.goto(`${stack.url}/ui/#/executions/${old}`);
    await page.locator('.facts .badge', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Re-run' }).click();
    await page.waitForURL((u) => /#\/executions\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${old}`), { timeout: 10_000 });
    const again = Number(/executions\/(\d+)$/.exec(page.url())![1]);
    expect((await stack.wait(again)).status).toBe('completed');
    expect((await http(stack.url, 'GET', `/api/executions/${again}`)).body.catalog_id).toBe(v1);
    const entered = (await stack.events(again)).filter((e) => e.event_type === 'step.enter').map((e) => e.step);
    expect(entered).toEqual(['first']);
  }, 60_000);

  it('starts with the labels and the priority the execution was started with', async () => {
    await stack.register(version('first', 'one'));
    const started = await http(stack.url, 'POST', '/api/run/playbook', { path: 'gui/audit/rerun', payload: { who: 'three' }, labels: { team: 'ops' }, priority: 8 });
    expect(started.status).toBe(200);
    const old = Number(started.body.execution_id);
    await stack.wait(old);
    await page.goto(`${stack.url}/ui/#/executions/${old}`);
    await page.locator('.facts .badge', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Re-run' }).click();
    await page.waitForURL((u) => /#\/executions\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${old}`), { timeout: 10_000 });
    const again = Number(/executions\/(\d+)$/.exec(page.url())![1]);
    expect((await stack.wait(again)).status).toBe('completed');
    expect((await http(stack.url, 'GET', `/api/executions/${again}`)).body.labels).toEqual({ team: 'ops' });
    const input = (await stack.events(again)).find((e) => e.event_type === 'execution.started')?.context?.input;
    expect(input).toMatchObject({ args: { who: 'three' }, priority: 8 });
  }, 60_000);
});
