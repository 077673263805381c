// The console's simulator offered a `playbook` task with `timeout_seconds` only ok and error: the
// branch its timeout takes (`outcome.error.code == 'timeout'`, the engine's own code) could not
// be shown, where `svc simulate --outcome STEP=timeout` shows it; choosing error instead stopped
// the simulation on a code it does not have.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: child_timeout, path: gui/audit/child_timeout }
workflow:
  - step: start
    tool: { name: report, kind: playbook, path: gui/audit/slow_child, timeout_seconds: 60 }
    next:
      - { step: late, when: "{{ outcome.status == 'error' and outcome.error.code == 'timeout' }}" }
      - { step: done }
  - step: late
    tool: { name: note, kind: noop }
  - step: done
    tool: { name: fine, kind: noop }
`;

describe('simulating a playbook task with a timeout', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('offers "times out", and its branch is taken', async () => {
    expect((await http(stack.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK })).status).toBe(201);
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fchild_timeout`);
    await page.getByLabel('Simulate in the browser').check();
    const start = page.getByRole('group', { name: 'start ends with' });
    await start.getByRole('button', { name: 'ok' }).waitFor();
    expect(await start.getByRole('button').allTextContents()).toEqual(['ok', 'error', 'times out']);
    await start.getByRole('button', { name: 'times out' }).click();
    await page.getByRole('group', { name: 'late ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByText('Simulated execution completed.').waitFor();
    await page.getByText('Path: start → late').waitFor();
    // A step with no timeout offers no such choice.
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.getByRole('group', { name: 'start ends with' }).getByRole('button', { name: 'ok' }).click();
    const done = page.getByRole('group', { name: 'done ends with' });
    await done.getByRole('button', { name: 'ok' }).waitFor();
    expect(await done.getByRole('button').allTextContents()).toEqual(['ok', 'error']);
  }, 60_000);
});
