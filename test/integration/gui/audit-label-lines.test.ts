// Every label was a column (styles.css `label`), so a label's parts were stacked: a run form's
// field read `version`, `*`, `(string)` on three lines, and the catalog entry's checkboxes
// (Simulate in the browser, Diff with version N) stood above their words. A field's label is one
// line now, and a checkbox sits beside its words.
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const yaml = (description: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: lines, path: gui/audit/label_lines }
inputs:
  version: { type: string, required: true, description: ${description} }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;

const box = async (l: Locator) => (await l.boundingBox())!;

describe('labels in the console', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    await ui.stack.register(yaml('the version'));
    await ui.stack.register(yaml('the version to deploy'));
  }, 300_000);
  afterAll(async () => ui?.close());

  it("keep a run field's name, required mark and type on one line, and a checkbox beside its words", async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/label_lines`);
    const label = page.locator('.run-field label');
    await label.waitFor({ timeout: 15_000 });
    // The name is bare text: the label is one line when it is no taller than its `(string)`.
    const type = await box(label.getByText('(string)'));
    expect((await box(label)).height, 'the name, mark and type are on lines of their own').toBeLessThan(type.height * 1.5);
    for (const words of ['Simulate in the browser', /Diff with version 1/]) {
      const check = page.getByRole('checkbox', { name: words });
      const c = await box(check);
      const l = await box(page.locator('label', { has: check }));
      expect(l.height, `${words}: the checkbox stands above its words`).toBeLessThan(c.height * 2);
    }
  }, 60_000);
});
