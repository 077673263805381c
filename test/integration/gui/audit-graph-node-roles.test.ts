// A statechart's step was a focusable `button` on every page, though only an execution's page
// does anything with it (Enter or a click narrows the timeline to it): on a catalog entry, in the
// simulation and in the editor's preview a screen reader announced "step check, button" and
// Enter did nothing. There a step is now an image named as before (still reached by Tab, its
// name read whole); on an execution's page it is a button that selects the step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: roles, path: gui/audit/node_roles }
workflow:
  - step: check
    wait: { signal: go }
    next: done
  - step: done
    tool: { name: a, kind: noop }
`;

describe('the role of a statechart step', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    await ui.stack.register(YAML);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('is an image where choosing it does nothing, a button on an execution', async () => {
    const { page, stack } = ui;
    const steps = (role: 'button' | 'img') => page.locator('svg.graph').getByRole(role, { name: /^step / });
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/node_roles`);
    await page.locator('svg.graph [data-step="done"]').waitFor({ timeout: 15_000 });
    expect(await steps('button').count()).toBe(0);
    expect(await steps('img').evaluateAll((ns) => ns.map((n) => [n.getAttribute('aria-label'), n.getAttribute('tabindex')]))).toEqual([
      ['step check', '0'],
      ['step done', '0'],
    ]);
    // The simulation draws the same statechart.
    await page.getByLabel('Simulate in the browser').check();
    await expect.poll(() => page.locator('svg.graph [data-step="check"]').getAttribute('aria-label')).toBe('step check, waiting');
    expect(await steps('button').count()).toBe(0);
    expect(await steps('img').count()).toBe(2);

    const id = await stack.run('gui/audit/node_roles');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await expect.poll(() => steps('button').count(), { timeout: 15_000 }).toBe(2);
    await steps('button').first().focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { name: 'Timeline of check' }).count()).toBe(1);
  }, 60_000);
});
