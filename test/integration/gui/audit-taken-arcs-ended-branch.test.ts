// A branch of an inclusive `next` that ends (its step's arc does not fire) is no source of a step
// entered later from another branch. The statechart's taken arcs (enteredFrom) took every step
// that exited since the entry before as a source: when `quick` ended its branch and `slow` later
// entered `join`, the arc quick → join, never taken, was drawn thick beside slow → join.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enteredFrom } from '../../../gui/src/graph/step-status.ts';
import { START_NODE } from '../../../gui/src/graph/model.ts';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';

const ENDED_BRANCH = `apiVersion: svc/v1
kind: Playbook
metadata: { name: ended_branch, path: gui/audit/ended_branch }
workflow:
  - step: fork
    tool: { name: t, kind: noop }
    next: { mode: inclusive, arcs: [ { step: quick }, { step: slow } ] }
  - step: quick
    tool: { name: t, kind: noop }
    next: [ { step: join, when: "{{ outcome.status == 'error' }}" } ]
  - step: slow
    tool: { name: t, kind: shell, command: "sleep 0.5" }
    next: join
  - step: join
    tool: { name: t, kind: noop }
`;

describe('the arcs taken around a branch that ended', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1, workerOptions: { shell: UNSANDBOXED_SHELL } });
    ({ stack, page } = ui);
    await stack.register(ENDED_BRANCH);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('enters join from slow only, and draws only slow → join thick', async () => {
    const id = await stack.run('gui/audit/ended_branch');
    expect((await stack.wait(id)).status).toBe('completed');
    const events = (await stack.events(id)) as ExecutionEvent[];
    // quick ended (no arc fired) before slow exited and entered join.
    const order = events.filter((e) => e.event_type === 'step.exit' || e.event_type === 'step.enter').map((e) => `${e.event_type === 'step.enter' ? '>' : '<'}${e.step}`);
    expect(order).toEqual(['>fork', '<fork', '>quick', '>slow', '<quick', '<slow', '>join', '<join']);
    const entered = enteredFrom(events, START_NODE);
    expect([...(entered.get('join') ?? [])]).toEqual(['slow']);

    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="join"][data-status="completed"]').waitFor({ timeout: 15_000 });
    const arcs = await page.$$eval('svg.graph g.edge', (gs) => gs.map((g) => ({ taken: g.classList.contains('taken'), label: g.querySelector('text')?.textContent ?? '' })));
    // start → fork, fork → quick, fork → slow, quick → join (its when), slow → join, join → end
    // (and quick → end, the branch's end): taken are all but quick → join.
    const notTaken = arcs.filter((a) => !a.taken);
    expect(notTaken.map((a) => a.label)).toEqual(["outcome.status == 'error'"]);
  }, 60_000);
});
