// A running execution's page says so when the server stops answering. It showed a read's error only
// before the execution was first loaded: once shown, a failed poll (the server stopped, its
// inspection stream closed) left the page as it was, `running` with its waiting step, and nothing
// told the user that it was no longer followed. The browser here loses the server as it would when
// the server stops: the stream closes and every request is refused.
import type { Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { until } from '../../helpers/until.ts';
import type { TestStack } from '../../helpers/stack.ts';

const NAP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: nap, path: gui/audit/unreachable }
workflow:
  - step: nap
    wait: { for: 1h }
`;

describe('a running execution whose server stops answering', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    ({ stack, page } = ui);
    await stack.register(NAP);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('shows that the server cannot be reached, beside what it last read', async () => {
    const id = await stack.run('gui/audit/unreachable');
    await until('the nap is waiting', async () => (await stack.events(id)).some((e) => e.event_type === 'timer.set'), 10_000);

    let down = false;
    const sockets: WebSocketRoute[] = [];
    await page.route('**/api/**', (route) => (down ? route.abort('connectionrefused') : route.continue()));
    await page.routeWebSocket(/\/inspect$/, (ws) => {
      sockets.push(ws);
      ws.connectToServer();
    });
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="nap"][data-status="waiting"]').waitFor({ timeout: 15_000 });
    await expect.poll(() => sockets.length, { timeout: 10_000 }).toBeGreaterThan(0);

    down = true;
    for (const ws of sockets) await ws.close({ code: 1006 });
    await page.getByRole('alert').filter({ hasText: 'The server cannot be reached' }).waitFor({ timeout: 10_000 });
    // What was read stays shown.
    expect(await page.locator('svg.graph [data-step="nap"]').getAttribute('data-status')).toBe('waiting');

    down = false;
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'The server cannot be reached' }).count(), { timeout: 10_000 }).toBe(0);
  }, 60_000);
});
