// The execution page's Cancel said "Execution N was cancelled at …" whatever the server answered.
// An execution that ends while the operator's cancel is on its way (the page still showed it
// running and offered Cancel) is answered 200 {status: already_finished, execution_status}: nothing
// was cancelled, and the console must say so, not that it cancelled it. The cancel request is held
// in the browser until the execution has completed (a real server, worker and PostgreSQL answer it).
import type { Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import type { TestStack } from '../../helpers/stack.ts';

const GATED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gated, path: gui/audit/cancel-gated }
workflow:
  - step: hold
    wait: { signal: go }
    next: done
  - step: done
    tool: { name: d, kind: noop }
`;

describe('Cancel of an execution that ended while the cancel was on its way', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    stack = ui.stack;
    await stack.register(GATED);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('says it had already ended and nothing was cancelled, as the API answered', async () => {
    const { page } = ui;
    page.on('dialog', (d) => void d.accept());
    const id = await stack.run('gui/audit/cancel-gated');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="hold"][data-status="waiting"]').waitFor({ timeout: 30_000 });
    let answer: { status: number; body: unknown } | undefined;
    // Hold the console's cancel until the execution has completed, then let the real server answer it.
    await page.route(`**/api/executions/${id}/cancel`, async (route: Route) => {
      expect((await http(stack.url, 'POST', `/api/executions/${id}/signals/go`, {})).status).toBe(202);
      expect((await stack.wait(id)).status).toBe('completed');
      const response = await route.fetch();
      answer = { status: response.status(), body: await response.json() };
      await route.fulfill({ response });
    });
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const status = page.getByRole('status').filter({ hasText: `Execution ${id}` });
    await status.waitFor({ timeout: 30_000 });
    expect(answer).toEqual({ status: 200, body: { status: 'already_finished', execution_id: id, execution_status: 'completed' } });
    const said = await status.innerText();
    expect(said).not.toMatch(new RegExp(`Execution ${id} was cancelled`));
    expect(said).toMatch(/had already completed/);
    expect(said).toMatch(/nothing was cancelled/);
    expect((await http(stack.url, 'GET', `/api/executions/${id}`)).body.status).toBe('completed');
  }, 120_000);
});
