// The console's Retry starts by default where the server's retry does without from_step (DESIGN.md
// "Waiting and control": "default: the first failed step"; docs/cli.md: a cancelled one from the
// step the cancel cut short). It chose the first step, in playbook order, whose state was failed,
// and for a cancelled execution the playbook's first step: a step whose error an arc took on was
// retried from, and a cancelled execution was retried from its start, so the steps that had
// completed (`recover`, `first`) ran again, where `svc retry ID` replays them.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { Json } from '../../helpers/http.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import type { TestStack } from '../../helpers/stack.ts';

// `start` fails and its error arc goes on to `recover`; `last` fails and ends the execution.
const HANDLED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: handled, path: gui/audit/retry_default/handled }
workflow:
  - step: start
    loop: { in: "{{ 'not a list' }}" }
    tool: { name: a, kind: noop }
    next: [ { step: recover, when: "{{ outcome.status == 'error' }}" } ]
  - step: recover
    tool: { name: r, kind: noop }
    next: last
  - step: last
    loop: { in: "{{ 'not a list' }}" }
    tool: { name: l, kind: noop }
`;
const CUT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: cut, path: gui/audit/retry_default/cut }
workflow:
  - step: first
    tool: { name: f, kind: noop }
    next: second
  - step: second
    wait: { for: 1h }
    next: third
  - step: third
    tool: { name: t, kind: noop }
`;

const idInUrl = (p: Page) => Number(/executions\/(\d+)/.exec(p.url())![1]);

describe('the Retry control of an ended execution', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    for (const yaml of [HANDLED, CUT]) await stack.register(yaml);
  }, 300_000);
  afterAll(async () => ui?.close());

  async function retried(id: number, from: string, replayed: string[]): Promise<void> {
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const select = page.getByLabel('Retry from step');
    await expect.poll(() => select.inputValue(), { timeout: 15_000 }).toBe(from);
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.waitForURL((u) => /#\/executions\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${id}`));
    const events = await stack.events(idInUrl(page));
    expect(events[0].context).toMatchObject({ retry_of: id, from_step: from });
    expect(events.filter((e: Json) => e.event_type === 'step.replayed').map((e: Json) => e.step)).toEqual(replayed);
  }

  it('is from the step whose failure ended it, not an earlier one whose error an arc took', async () => {
    const id = await stack.run('gui/audit/retry_default/handled');
    expect(await stack.wait(id)).toMatchObject({ status: 'failed', error: { step: 'last' } });
    await retried(id, 'last', ['recover']);
  }, 60_000);

  it('of a cancelled execution, is from the step the cancel cut short', async () => {
    const id = await stack.run('gui/audit/retry_default/cut');
    await until('it waits', async () => (await stack.events(id)).some((e: Json) => e.event_type === 'timer.set'), 10_000);
    expect((await http(stack.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
    expect((await stack.wait(id)).status).toBe('cancelled');
    await retried(id, 'second', ['first']);
  }, 60_000);
});
