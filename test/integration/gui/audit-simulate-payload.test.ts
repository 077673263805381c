// The console's simulation of a playbook whose arc reads a workload value a start gives (no
// default): it stopped with "no value of workload.go (a start gives it) (declare it under
// examples:)", though examples: hold step results, not workload values, and the console offered
// no way to give a start's payload (svc simulate has --payload). It now takes a payload, checked as
// a start checks it, and tells what to do by what is lacking.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const GATED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gated, path: gui/audit/gated }
inputs:
  count: { type: integer }
  go: { type: boolean }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next:
      - { step: go, when: "{{ workload.go }}" }
      - { step: stay }
  - step: go
  - step: stay
`;

describe("the console's simulation of a decision on a start's value", () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
    await stack.register(GATED);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('says a payload gives it, not examples:, and follows the payload given', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fgated`);
    await page.getByLabel('Simulate in the browser').check();
    const sim = page.locator('.simulator');
    await sim.getByRole('button', { name: 'ok' }).click();
    await expect.poll(() => sim.textContent(), { timeout: 10_000 }).toContain('no value of workload.go (a start gives it) (give it in the payload).');
    expect(await sim.textContent()).not.toContain('examples:');

    await sim.getByLabel(/Payload of the simulated start/).fill('{"go": true}');
    await expect.poll(() => sim.textContent(), { timeout: 10_000 }).toContain('Simulated execution completed.');
    expect(await sim.textContent()).toContain('Path: start → go');
    await sim.getByLabel(/Payload of the simulated start/).fill('{"go": false}');
    await expect.poll(() => sim.textContent(), { timeout: 10_000 }).toContain('Path: start → stay');
  }, 60_000);

  it('refuses a payload a start refuses, and one that is not a JSON object', async () => {
    // A fresh page: the same route again keeps the simulation the first case left.
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui%2Faudit%2Fgated`);
    await page.reload();
    await page.getByLabel('Simulate in the browser').check();
    const sim = page.locator('.simulator');
    const field = sim.getByLabel(/Payload of the simulated start/);
    await field.fill('{"count": "three"}');
    await expect.poll(() => sim.textContent(), { timeout: 10_000 }).toContain('a start with this payload is refused (invalid_inputs): workload.count: must be integer, got string');
    // The payload can be put right: its field is still there.
    await field.fill('[1]');
    await expect.poll(() => sim.textContent(), { timeout: 10_000 }).toContain('Payload: must be a JSON object');
    await field.fill('{"count": 3, "go": true}');
    await sim.getByRole('button', { name: 'ok' }).click();
    await expect.poll(() => sim.textContent(), { timeout: 10_000 }).toContain('Path: start → go');
  }, 60_000);
});
