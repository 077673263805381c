// A command that waited for room on its task's limit, not for a worker: with one slot on the limit
// and an idle worker of four slots, the second loop item waits about as long as the first runs.
// The Gantt's grey lead-in before it, and its details, say it waited to be claimed (a worker, or
// room on its limit), not "for a worker": an operator reading that would add workers, which
// changes nothing here.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let stack: TestStack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1, concurrency: 4, workerOptions: { shell: UNSANDBOXED_SHELL } });
  expect((await http(stack.url, 'PUT', '/api/limits/slot', { concurrency: 1 })).status).toBeLessThan(300);
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: limited, path: timeline/limited }
workflow:
  - step: start
    loop: { in: "{{ [1, 2] }}", iterator: n, mode: parallel }
    tool: { name: nap, kind: shell, command: "sleep 0.4", limit: { name: slot } }
`);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

it('says a command waited to be claimed, not for a worker, when it waited for room on its limit', async () => {
  const id = await stack.run('timeline/limited');
  expect((await stack.wait(id)).status).toBe('completed');
  await page.goto(`${stack.url}/ui/#/executions/${id}`);
  await until('both items drawn', async () => ((await page.locator('.gantt [data-kind="command"]').count()) === 2 ? true : undefined), 20_000, 50);
  const titles = await page.$$eval('.gantt .gantt-queued', (nodes) => nodes.map((n) => n.getAttribute('title') ?? ''));
  // The second item waited for the first's slot (about 400 ms), a worker being free all along.
  const waited = titles.find((t) => /waited ([\d.]+ s|[3-9]\d\d ms)/.test(t));
  expect(waited, JSON.stringify(titles)).toBeDefined();
  expect(waited).toMatch(/^waited .+ to be claimed \(a free worker, or room on a limit of its task\)$/);
  await page.locator('.gantt [data-kind="command"][data-loop-index="1"]').click();
  const details = page.locator('.bar-details');
  await expect.poll(async () => details.textContent()).toContain('Waited to be claimed');
  expect(await details.textContent()).not.toContain('Waited for a worker');
});
