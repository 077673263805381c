// The console's Retry of a retry that began no step (queued on its playbook's concurrency limit,
// then cancelled): it offered only the entry step, labelled '(cut short)', and sent it as
// from_step, so every step ran again, those the first execution had completed too. The server
// retries such an execution from its own from_step with the outcomes it was to replay
// (src/engine/unbegun-retry.ts); the console now offers and chooses that step, as `svc retry` does.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import type { TestStack } from '../../helpers/stack.ts';

// One at a time: a run with `hold` keeps the slot until signalled; the others fail at `bad`.
const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: one_at_a_time, path: gui/audit/retry_unbegun }
concurrency: { limit: 1 }
workflow:
  - step: start
    next:
      - { step: hold, when: "{{ workload.hold | default(false) }}" }
      - { step: bad }
  - step: hold
    wait: { signal: go }
  - step: bad
    wait: { until: "{{ 'not a time' }}" }
`;

const idInUrl = (p: Page) => Number(/executions\/(\d+)/.exec(p.url())![1]);

describe('the Retry control of a retry cancelled while queued', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(YAML);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('is from the step that retry was to start from, replaying what it was to replay', async () => {
    const first = await stack.run('gui/audit/retry_unbegun');
    expect(await stack.wait(first)).toMatchObject({ status: 'failed', error: { step: 'bad' } });
    const holder = await stack.run('gui/audit/retry_unbegun', { hold: true });
    await until(`execution ${holder} waits`, async () => ((await http(stack.url, 'GET', `/api/executions/${holder}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
    const queued = await http(stack.url, 'POST', `/api/executions/${first}/retry`, {});
    expect(queued.body).toMatchObject({ from_step: 'bad', replayed: ['start'] });
    const r1 = queued.body.execution_id as number;
    expect((await http(stack.url, 'POST', `/api/executions/${r1}/cancel`, {})).body).toMatchObject({ status: 'cancelled' });

    await page.goto(`${stack.url}/ui/#/executions/${r1}`);
    const select = page.getByLabel('Retry from step');
    await expect.poll(() => select.inputValue(), { timeout: 15_000 }).toBe('bad');
    expect(await select.locator('option').allTextContents()).toEqual(['start', 'bad (as it was to retry)']);
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.waitForURL((u) => /#\/executions\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${r1}`));
    const again = idInUrl(page);
    expect((await stack.events(again))[0].context).toMatchObject({ retry_of: r1, from_step: 'bad' });
    expect((await http(stack.url, 'POST', `/api/executions/${holder}/signals/go`, { payload: {} })).status).toBe(202);
    expect(await stack.wait(again)).toMatchObject({ status: 'failed', error: { step: 'bad' } });
    expect((await stack.events(again)).filter((e: Json) => e.event_type === 'step.replayed').map((e: Json) => e.step)).toEqual(['start']);
  }, 90_000);
});
