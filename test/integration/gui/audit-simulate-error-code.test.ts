// The simulation takes a failure with a code (`error:connection`, as `svc simulate --outcome
// fetch=error:connection`) and decides the arcs on it as a run does, but the console's simulator
// offered only a bare `error`, the simulation's own code: a playbook branching on
// `outcome.error.code` stopped "depends on data: no error code of fetch" with nothing the page let
// one do about it, and the branch a connection error takes could not be shown. A task step's
// question now has an error code beside its error, and a stop on the code says to choose one.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: error_code, path: gui/audit/sim_error_code }
workflow:
  - step: fetch
    tool: { name: get, kind: http, url: "http://example.invalid/" }
    next:
      - { step: later, when: "{{ outcome.status == 'error' and outcome.error.code == 'connection' }}" }
      - { step: done }
  - step: later
    tool: { name: note, kind: noop }
  - step: done
    tool: { name: fine, kind: noop }
`;

describe('simulating a failure with its code', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
    await stack.register(PLAYBOOK);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('takes the branch of the code chosen, and says to choose one when a bare error stops it', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fsim_error_code`);
    await page.getByLabel('Simulate in the browser').check();
    const fetch = page.getByRole('group', { name: 'fetch ends with' });
    await fetch.getByRole('button', { name: 'error' }).click();
    await page.getByText('Simulation stopped: the next step after fetch depends on data: no error code of fetch (a simulated failure has none) (restart and choose the error code fetch fails with).').waitFor({ timeout: 5_000 });

    await page.getByRole('button', { name: 'Restart' }).click();
    await fetch.getByLabel('error code').selectOption('connection');
    await fetch.getByRole('button', { name: 'error' }).click();
    await page.getByRole('group', { name: 'later ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByText('Simulated execution completed.').waitFor({ timeout: 5_000 });
    await page.getByText('Path: fetch → later').waitFor();
    expect(await page.locator('svg.graph [data-step="done"]').getAttribute('data-status')).toBe('skipped');

    // Another code takes no arc: the failure fails the execution, as in a run.
    await page.getByRole('button', { name: 'Restart' }).click();
    await fetch.getByLabel('error code').selectOption('http_status');
    await fetch.getByRole('button', { name: 'error' }).click();
    await page.getByText(/^Simulated execution failed\. fetch: /).waitFor({ timeout: 5_000 });
  }, 60_000);
});
