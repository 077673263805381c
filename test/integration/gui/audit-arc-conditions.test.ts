// An arc's `when` is drawn cut past 40 characters, and nothing else on an execution's page says
// it: a reader could not tell which condition took the path drawn thick. Two arcs from one step
// to another whose conditions began alike (their first 39 characters) were drawn as one arc, the
// machine's second arc missing. Each arc now has its whole condition as its tooltip, and arcs
// are told apart by their whole conditions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const EAST = "workload.region_selection_mode_for_this_run == 'primary-east'";
const WEST = "workload.region_selection_mode_for_this_run == 'primary-west'";
const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: conditions, path: gui/audit/arc_conditions }
workload: { region_selection_mode_for_this_run: primary-east }
workflow:
  - step: pick
    tool: { name: a, kind: noop }
    next:
      - { step: deploy, when: "{{ ${EAST} }}" }
      - { step: deploy, when: "{{ ${WEST} }}" }
  - step: deploy
    tool: { name: b, kind: noop }
`;

describe('the conditions of arcs', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    await ui.stack.register(YAML);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('says each whole condition in its arc\'s tooltip, and draws each arc', async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/arc_conditions`);
    await page.locator('svg.graph [data-step="deploy"]').waitFor({ timeout: 15_000 });
    const labelled = page.locator('svg.graph g.edge:has(text.edge-label)');
    expect(await labelled.locator('text.edge-label').allTextContents()).toEqual([`${EAST.slice(0, 39)}…`, `${WEST.slice(0, 39)}…`]);
    expect(await labelled.locator('title').allTextContents()).toEqual([`pick → deploy when ${EAST}`, `pick → deploy when ${WEST}`]);
  }, 60_000);
});
