// A paused execution's step entered while it was paused: the machine holds what the step decided
// (its command, a child's start) until the resume, and GET …/state says so (`held`), but the
// statechart drew the step `active`, the yellow of "the step running now", and said nothing of
// the pause: a reader took it for running work. Its box now says it is held by the pause (class
// `held`, its accessible name and tooltip), and stops saying so once resumed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import type { TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

describe('a paused execution', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: gui/audit/paused_held }
workflow:
  - step: start
    wait: { signal: go }
    next: work
  - step: work
    tool: { name: hi, kind: shell, command: "echo hi" }
`);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('draws a step whose work the pause holds as held, not running', async () => {
    const id = await stack.run('gui/audit/paused_held');
    await until('it waits', async () => ((await http(stack.url, 'GET', `/api/executions/${id}`)).body.waits?.length ? true : undefined), 15_000);
    expect((await http(stack.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
    expect((await http(stack.url, 'POST', `/api/executions/${id}/signals/go`, { payload: {} })).status).toBe(202);
    const state = await until('work held', async () => {
      const s = (await http(stack.url, 'GET', `/api/executions/${id}/state`)).body;
      return s.steps.work?.held ? s : undefined;
    }, 15_000);
    expect(state.steps.work).toMatchObject({ status: 'active', held: 1 });

    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const work = page.locator('svg.graph [data-step="work"]');
    await expect.poll(() => work.getAttribute('aria-label'), { timeout: 15_000 }).toBe('step work, active, held by the pause: 1 command, issued once resumed');
    expect(await work.getAttribute('class')).toBe('node st-active held');
    expect(await work.locator('title').textContent()).toBe('work (held by the pause: 1 command, issued once resumed)');
    expect(await page.locator('.legend li.held').textContent()).toBe(' held by the pause');

    expect((await http(stack.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    expect((await stack.wait(id, 30_000)).status).toBe('completed');
    await expect.poll(() => work.getAttribute('aria-label'), { timeout: 15_000 }).toBe('step work, completed');
    expect(await work.getAttribute('class')).toBe('node st-completed');
  }, 60_000);
});
