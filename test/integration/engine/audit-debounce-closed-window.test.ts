// A debounce window that has closed takes no more starts (docs/flow-control.md, "Debounce": a
// later start joins "while the window is open"; "when the window closes, the execution is
// admitted, or queued on its concurrency limit"). An execution whose window closed and that waits
// for room on its key keeps its payload; a start after the close opens a window of its own.
// Real server and database, no worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;

describe('a start after a debounce window closed', () => {
  it('opens a new window: the queued execution keeps its payload and its place', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: dc, path: flow/debounce-closed }
workload: { tenant: t0, d: x }
concurrency: { limit: 1, key: "{{ workload.tenant }}" }
debounce: { key: "{{ workload.d }}", seconds: 1 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    const start = async (payload: Record<string, unknown>) => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/debounce-closed', payload })).body;
    // acme's one slot is held (no worker: the execution stays running).
    const holder = (await start({ d: 'hold', tenant: 'acme' })).execution_id as number;
    await expect.poll(() => statusOf(holder), { timeout: 15_000 }).toBe('running');

    const first = (await start({ d: 'burst', tenant: 'acme', n: 1 })).execution_id as number;
    // Its window closes (1 s): it is queued on acme, behind the holder.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await statusOf(first)).toBe('queued');
    const notBefore = (await http(t.url, 'GET', `/api/executions/${first}`)).body.flow.not_before as string;
    expect(Date.parse(notBefore)).toBeLessThan(Date.now());

    const later = await start({ d: 'burst', tenant: 'acme', n: 2 });
    expect(later.debounced, 'a start after the window closed does not join it').toBeUndefined();
    expect(later.execution_id).not.toBe(first);
    // The queued one's window stays closed: it is next on acme.
    expect((await http(t.url, 'GET', `/api/executions/${first}`)).body.flow.not_before).toBe(notBefore);

    expect((await http(t.url, 'POST', `/api/executions/${holder}/cancel`, { reason: 'done' })).status).toBe(200);
    await expect.poll(() => statusOf(first), { timeout: 15_000 }).toBe('running');
    const admitted = (await http(t.url, 'GET', `/api/events/${first}`)).body.events.find((e: { event_type: string }) => e.event_type === 'execution.admitted');
    // Its own payload (a debounced execution's admission carries the burst's last: its own here).
    expect(admitted.result ?? { d: 'burst', tenant: 'acme', n: 1 }).toEqual({ d: 'burst', tenant: 'acme', n: 1 });
    for (const id of [first, later.execution_id as number]) await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' });
  });
});
