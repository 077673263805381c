// An execution's page said how long it had run as of its last render. With the inspection stream
// open (SVC_AUTH=none), the page renders when the statechart moves, so an execution waiting for a
// signal kept "Duration 762 ms" for as long as it waited, while its step's bar in the Gantt (and
// the executions list) grew. The duration now grows each second until the execution ends.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const WAITS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: waits, path: gui/audit/live-duration }
workflow:
  - step: hold
    wait: { signal: go }
`;

/** Milliseconds of a duration as the console writes it ("762 ms", "3.5 s"). */
function msOf(text: string): number {
  const m = /^(\d+(?:\.\d+)?) (ms|s)$/.exec(text.trim());
  if (!m) throw new Error(`not a duration: ${text}`);
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

const duration = async (page: Page) => msOf(await page.locator('dt:text-is("Duration") + dd').innerText());

describe("a waiting execution's duration", () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    await ui.stack.register(WAITS);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('grows while it waits, with the inspection stream open', async () => {
    const { page, stack } = ui;
    const id = await stack.run('gui/audit/live-duration');
    let sockets = 0;
    page.on('websocket', () => sockets++);
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.getByRole('button', { name: 'Send go' }).waitFor();
    expect(sockets).toBe(1);
    const before = await duration(page);
    await page.waitForTimeout(3_000);
    // Ticks of a second: at least two of the three seconds are counted.
    expect(await duration(page)).toBeGreaterThanOrEqual(before + 2_000);
    await page.getByRole('button', { name: 'Send go' }).click();
    expect((await stack.wait(id)).status).toBe('completed');
    await page.locator('.facts .badge', { hasText: 'completed' }).waitFor();
    // Once ended, it is what it took, and stays.
    const ended = await duration(page);
    await page.waitForTimeout(1_500);
    expect(await duration(page)).toBe(ended);
  }, 60_000);
});
