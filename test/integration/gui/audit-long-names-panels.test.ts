// A long step name (the DSL allows 256 characters) or playbook path without breaks ran out of the
// execution page's panels: the Retry select grew as wide as the name, out of the page with its
// '(failed)' mark; the Playbook fact, each event's step, a bar's heading (its status badge after
// it) and a catalog entry's title went past the panel's edge, hidden. They are cut (the select, as the statechart cuts) or wrap.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const PATH = `gui/audit/${'a_long_path_segment_without_any_break_'.repeat(4)}/x`;
const STEP = `s_${'x'.repeat(180)}`;

describe('an execution whose step name and path are long', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: long, path: ${PATH} }
workflow:
  - step: ${STEP}
    loop: { in: "{{ 'not a list' }}" }
    tool: { name: a, kind: noop }
`);
  }, 300_000);
  afterAll(async () => ui?.close());

  /** How far `selector`'s elements reach past the right edge of their panel (0: none does). */
  const pastPanel = (selector: string) =>
    page.locator(selector).evaluateAll((els) =>
      Math.max(0, ...els.map((e) => e.getBoundingClientRect().right - (e.closest('section.panel')?.getBoundingClientRect().right ?? 0))),
    );

  it('keeps them inside the panels', async () => {
    const id = await stack.run(PATH);
    expect((await stack.wait(id)).status).toBe('failed');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const select = page.getByLabel('Retry from step');
    await expect.poll(() => select.inputValue(), { timeout: 15_000 }).toBe(STEP);
    expect(await select.locator('option').first().textContent()).toMatch(/^s_x+… \(failed\)$/);
    expect(await pastPanel('.controls select, .controls button')).toBe(0);
    expect(await pastPanel('dl.facts dd')).toBe(0);

    await page.locator('.gantt [data-kind="step"]').first().click();
    await expect.poll(() => page.locator('.bar-details h3 .badge').count()).toBe(1);
    expect(await pastPanel('.bar-details h3, .bar-details h3 .badge')).toBe(0);

    await page.getByRole('button', { name: /^Events/ }).click();
    await expect.poll(() => page.locator('.timeline .ev-step').count()).toBeGreaterThan(0);
    expect(await pastPanel('.timeline .ev-step')).toBe(0);
  }, 60_000);

  it("keeps the catalog entry's title, its path, inside its panel", async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/${PATH}`);
    await expect.poll(() => page.locator('section.panel h2').first().textContent(), { timeout: 15_000 }).toBe(PATH);
    expect(await pastPanel('section.panel h2')).toBe(0);
  }, 60_000);
});
