// The simulation of a playbook whose step names are long (the DSL allows 256 characters) ran out
// of its panel: a waiting step's question (`<name> ends with`), the path taken and the verdict
// (`Simulated execution failed. <name>: …`) are one unbroken line each, wider than the panel, and
// at 200 % zoom the page scrolled sideways. They wrap now, as the execution page's facts do.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const FIRST = `s_${'x'.repeat(200)}`;
const SECOND = `t_${'y'.repeat(200)}`;

describe('simulating a playbook whose step names are long', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: long, path: gui/audit/sim_long_names }
workflow:
  - step: ${FIRST}
    tool: { name: a, kind: noop }
    next: ${SECOND}
  - step: ${SECOND}
    tool: { name: b, kind: noop }
`);
  }, 300_000);
  afterAll(async () => ui?.close());

  /** How far `selector`'s elements reach past the right edge of their panel (0: none does). */
  const pastPanel = (selector: string) =>
    page.locator(selector).evaluateAll((els) =>
      Math.max(0, ...els.map((e) => e.getBoundingClientRect().right - (e.closest('section.panel')?.getBoundingClientRect().right ?? 0))),
    );
  const sideways = () => page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth').then(Number);

  it('keeps its questions, path and verdict inside the panel, at 200 % zoom too', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fsim_long_names`);
    await page.getByLabel('Simulate in the browser').check();
    for (const width of [1280, 640]) {
      await page.setViewportSize({ width, height: 900 });
      await page.getByRole('button', { name: 'Restart' }).click();
      await page.getByRole('group', { name: `${FIRST} ends with` }).getByRole('button', { name: 'ok' }).click();
      await page.getByRole('group', { name: `${SECOND} ends with` }).getByRole('button', { name: 'error' }).waitFor();
      expect(await pastPanel('.simulator legend, .simulator .sim-step, .simulator p')).toBe(0);
      await page.getByRole('group', { name: `${SECOND} ends with` }).getByRole('button', { name: 'error' }).click();
      await page.getByText(/^Simulated execution failed\./).waitFor({ timeout: 5_000 });
      expect(await pastPanel('.simulator .actions span, .simulator p')).toBe(0);
      expect(await sideways()).toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 60_000);
});
