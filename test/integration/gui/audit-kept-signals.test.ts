// A signal sent before any step waited for it is kept for a step that says `buffer: true`
// (docs/playbook-dsl.md): GET /api/executions/{id}/state lists it (`kept_signals`) and `svc status`
// prints `signals kept  go (by …)`, `signals never taken` once the execution ended. The execution
// page showed nothing of it: no step waits, the graph has the step pending, and the signal that will
// move it on at once (or never did) was nowhere. Real server, worker and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import { http } from '../../helpers/http.ts';
import type { TestStack } from '../../helpers/stack.ts';

const KEEPS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: keeps, path: gui/audit/kept-signals }
workflow:
  - step: first
    wait: { signal: hold }
    next: gate
  - step: gate
    wait: { signal: go, buffer: true }
`;

describe('signals kept for a later step', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    stack = ui.stack;
    await stack.register(KEEPS);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('are shown while kept, and as never taken once the execution ended', async () => {
    const { page } = ui;
    page.on('dialog', (d) => void d.accept());
    const id = await stack.run('gui/audit/kept-signals');
    const sent = await http(stack.url, 'POST', `/api/executions/${id}/signals/go`, { payload: { n: 1 } });
    expect(sent.body).toMatchObject({ status: 'buffered', step: 'gate' });
    const kept = (await http(stack.url, 'GET', `/api/executions/${id}/state`)).body.kept_signals;
    expect(kept.map((k: { signal: string }) => k.signal)).toEqual(['go']);
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const fact = page.locator('.facts dd.kept-signals');
    await fact.waitFor({ timeout: 15_000 });
    expect(await page.locator('.facts dt', { hasText: 'Signals kept' }).count()).toBe(1);
    expect(await fact.innerText()).toMatch(/^go \(by .+\)$/);
    expect((await http(stack.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test' })).body.status).toBe('cancelled');
    await page.locator('.facts dt', { hasText: 'Signals never taken' }).waitFor({ timeout: 15_000 });
    expect(await fact.innerText()).toMatch(/^go \(by .+\)$/);
  }, 60_000);
});
