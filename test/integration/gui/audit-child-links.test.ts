// A statechart step's child playbooks: two tasks starting the same playbook drew and linked it
// twice, and a templated path ({{ workload.kid }}) was a link to a catalog entry of that name,
// which said "No playbook at {{ workload.kid }}". Each child is drawn once now, and a templated
// one as text: it is known only as a run renders it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const KIDS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: kids, path: gui/audit/kids }
workload: { kid: gui/audit/kid }
workflow:
  - step: start
    tool:
      - { name: one, kind: playbook, path: gui/audit/kid }
      - { name: two, kind: playbook, path: gui/audit/kid }
      - { name: three, kind: playbook, path: "{{ workload.kid }}" }
`;

describe("a step's child playbooks in the statechart", () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    await ui.stack.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: kid, path: gui/audit/kid }\nworkflow:\n  - step: only\n');
    await ui.stack.register(KIDS);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('are each drawn once, a templated path without a link', async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fkids`);
    const step = page.locator('svg.graph [data-step="start"]');
    await step.waitFor({ timeout: 10_000 });
    expect(await step.locator('a').evaluateAll((links) => links.map((a) => `${a.getAttribute('href')} ${a.textContent}`))).toEqual(['#/catalog/entry/gui%2Faudit%2Fkid ▸ gui/audit/kid']);
    expect(await step.locator('text').allTextContents()).toContain('▸ {{ workload.kid }}');
  }, 60_000);
});
