// A command a worker held when its execution was cancelled: the worker writes its claim into the
// log with its first report, which for a long task is its end, so the Gantt (read from the log)
// drew the command's bar from its issue to the cancel with no worker, as if none had ever run it;
// while it ran, alike. The step route has the claim (worker_id, claimed_at, claim_attempt, read
// from the command's row); the bar now names that worker and runs from the claim, the time before
// it a wait to be claimed. Real server, real `svc worker` process, real browser.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startWorkerStack({ concurrency: 1 });
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: long, path: gui/audit/cancelled_held }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: 'sleep 30' }
`);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

it('names the worker that held a cancelled command, and draws it from its claim', async () => {
  const id = await stack.run('gui/audit/cancelled_held');
  const held = await until('its command held', async () => {
    const row = (await stack.deps.db.query<{ status: string; worker_id: string; claimed_at: Date }>('SELECT status, worker_id, claimed_at FROM core.command WHERE execution_id = $1', [id])).rows[0];
    return row && ['CLAIMED', 'RUNNING'].includes(row.status) ? row : undefined;
  }, 30_000, 50);
  // Its claim is on the row only: the worker reports it with the task's end.
  expect((await stack.events(id)).map((e) => e.event_type)).not.toContain('command.claimed');
  const worker = stack.workers[0].name;
  const claimedAt = held.claimed_at.toISOString();

  await page.goto(`${stack.url}/ui/#/executions/${id}`);
  const bar = page.locator('.gantt [data-kind="command"]');
  const label = page.locator('.gantt-row.kind-command .gantt-label');
  // While it runs: held by that worker since its claim.
  await expect.poll(() => label.textContent(), { timeout: 10_000 }).toBe(`command 1 · ${worker}`);
  expect(await bar.getAttribute('data-start')).toBe(claimedAt);
  expect(await bar.getAttribute('data-status')).toBe('running');

  expect((await http(stack.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'wrong input' })).status).toBe(200);
  await page.reload();
  await expect.poll(() => bar.getAttribute('data-status'), { timeout: 10_000 }).toBe('cancelled');
  await expect.poll(() => label.textContent(), { timeout: 10_000 }).toBe(`command 1 · ${worker}`);
  expect(await bar.getAttribute('data-start')).toBe(claimedAt);
  expect(await bar.getAttribute('data-worker')).toBe(worker);
  await bar.click();
  const details = page.locator('.bar-details');
  await expect.poll(() => details.locator('dt:text-is("Worker") + dd').textContent()).toBe(worker);
  expect(await details.locator('dt:text-is("Claimed") + dd time').getAttribute('datetime')).toBe(claimedAt);
}, 90_000);
