// The console's simulation drew as taken, into each step, the arc from the latest step before it
// on the path with an arc to it. Of two branches meeting at a step, the one entered later may be
// the one still waiting: answering `slow` first entered `join` from slow, but the statechart drew
// quick → join (quick still waiting, then ending its branch) thick and slow → join thin. The
// simulation now says which step's exit entered each step (`from`, beside `path`), as the log does
// for a real execution.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const MEET = `apiVersion: svc/v1
kind: Playbook
metadata: { name: meet, path: gui/audit/meet }
workflow:
  - step: fork
    tool: { name: t, kind: noop }
    next: { mode: inclusive, arcs: [ { step: slow }, { step: quick } ] }
  - step: slow
    tool: { name: t, kind: noop }
    next: join
  - step: quick
    tool: { name: t, kind: noop }
    next: [ { step: join, when: "{{ outcome.status == 'error' }}" } ]
  - step: join
    tool: { name: t, kind: noop }
`;

describe('the arcs a simulation took where two branches meet', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(MEET);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('says which exit entered each step', () => {
    // slow answered while quick waits: join is entered from slow, though quick came later on the path.
    const r = simulatePlaybook(MEET, { fork: 'ok', slow: 'ok' }, { pauseWhenUndecided: true });
    expect(r.path).toEqual(['fork', 'slow', 'quick', 'join']);
    expect(r.from).toEqual([null, 'fork', 'fork', 'slow']);
    expect(r.waiting).toEqual(['quick', 'join']);
  });

  it('draws slow → join taken and quick → join not, whichever branch is answered last', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/meet`);
    await page.getByLabel('Simulate in the browser').check();
    const answer = (legend: string) => page.locator('.simulator fieldset', { hasText: legend }).locator('button', { hasText: 'ok' }).click();
    await answer('fork ends with');
    await answer('slow ends with');
    await answer('join ends with');
    await answer('quick ends with');
    await page.getByText('Simulated execution completed.').waitFor({ timeout: 5_000 });
    expect(await page.locator('.simulator p.muted').innerText()).toBe('Path: fork → slow → quick → join');
    const arcs = await page.$$eval('.simulator svg.graph g.edge', (gs) => gs.map((g) => ({ taken: g.classList.contains('taken'), label: g.querySelector('text')?.textContent ?? '' })));
    // Every arc drawn was taken but quick's conditional arc to join.
    expect(arcs.filter((a) => !a.taken).map((a) => a.label)).toEqual(["outcome.status == 'error'"]);
  }, 60_000);
});
