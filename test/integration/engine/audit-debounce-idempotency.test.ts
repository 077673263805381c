// A start with an Idempotency-Key that joins an open debounce window is answered again, the same,
// when it is sent again with that key: after its window closed and its execution ran, a repeat
// must not open a window of its own and run the same payload a second time (real server and
// database, no worker).
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

describe('a debounced start with an Idempotency-Key', () => {
  it('sent again with its key answers as it did first (replayed), not with a new execution', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: d, path: flow/debounce-key }
debounce: { key: "{{ workload.customer }}", seconds: 1 }
workload: { customer: c0 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    const opened = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/debounce-key', payload: { customer: 'acme', n: 1 } });
    expect(opened.status).toBe(200);
    const id: number = opened.body.execution_id;
    const request = { path: 'flow/debounce-key', payload: { customer: 'acme', n: 2 } };
    const joined = await http(t.url, 'POST', '/api/run/playbook', request, { 'idempotency-key': 'order-77' });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ execution_id: id, debounced: true });

    // The window closes; the execution runs with the joined payload.
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('running');
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' })).status).toBe(200);

    // The client did not get the first answer and sends the request again, with its key.
    const again = await http(t.url, 'POST', '/api/run/playbook', request, { 'idempotency-key': 'order-77' });
    expect(again.status).toBe(200);
    expect(again.body, 'the first answer, replayed').toMatchObject({ execution_id: id, debounced: true });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const executions = (await http(t.url, 'GET', '/api/executions?path=flow/debounce-key')).body.executions;
    expect(executions.map((e: { execution_id: number }) => e.execution_id)).toEqual([id]);
  });
});
