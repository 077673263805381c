// The console's Retry offered every step of the playbook, those the execution never reached too
// (a branch not taken, the steps after the one that failed); the server's retry refuses such a
// step (422 'execution N never ran step never: retry it from a step it ran'), so picking one
// ended in an error. It offers now only the steps the server takes (machines/retry-default-step.ts
// retryReaches, the one rule for both), and each of them starts a retry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';

// `start` goes to `risky` (its loop's input is no list: it fails), never to `other`; `never` follows `risky`.
const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: choices, path: gui/audit/retry_choices }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next: [ { step: risky, when: "{{ outcome.status == 'ok' }}" }, { step: other } ]
  - step: other
    tool: { name: o, kind: noop }
  - step: risky
    loop: { in: "{{ 'not a list' }}" }
    tool: { name: r, kind: noop }
    next: never
  - step: never
    tool: { name: n, kind: noop }
`;

describe('the steps Retry offers', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    await ui.stack.register(YAML);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('are the steps the execution reached, each of which the server retries from', async () => {
    const { page, stack } = ui;
    const id = await stack.run('gui/audit/retry_choices');
    expect((await stack.wait(id)).status).toBe('failed');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const select = page.getByLabel('Retry from step');
    await select.waitFor({ timeout: 15_000 });
    await page.locator('svg.graph [data-step="never"][data-status="skipped"]').waitFor({ timeout: 15_000 });
    expect(await select.locator('option').allTextContents()).toEqual(['start', 'risky (failed)']);
    expect(await select.inputValue()).toBe('risky');
    for (const from of await select.locator('option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value))) {
      expect((await http(stack.url, 'POST', `/api/executions/${id}/retry`, { from_step: from })).status, from).toBe(201);
    }
  }, 60_000);
});
