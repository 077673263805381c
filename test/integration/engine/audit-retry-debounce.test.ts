// A retry of an execution of a debounced playbook is a new execution linked to the one it retries
// (DESIGN.md "Waiting and control": 201 {execution_id}, a new execution, `retry_of` and the old
// one's `retried_as`), whatever debounce window of its key is open: it neither joins one nor opens
// one. Joining, it answered the open window's execution as the retry, took that execution's
// payload for its own, and lost its link and its replay. Real server and database, no worker.
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

const events = async (id: number) => (await http(t.url, 'GET', `/api/events/${id}`)).body.events as { event_type: string; context: Record<string, unknown>; result?: Record<string, unknown> }[];

describe('a retry of a debounced playbook while a window of its key is open', () => {
  it('is a new execution, linked, and leaves the open window its own payload', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: d, path: flow/retry-debounced }
debounce: { key: "{{ workload.c }}", seconds: 1 }
workload: { c: x }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    const old = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/retry-debounced', payload: { c: 'k', who: 'old' } })).body.execution_id as number;
    expect((await http(t.url, 'POST', `/api/executions/${old}/cancel`, { reason: 'to retry' })).status).toBe(200);
    const window = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/retry-debounced', payload: { c: 'k', who: 'window' } })).body.execution_id as number;

    const retried = await http(t.url, 'POST', `/api/executions/${old}/retry`, {});
    expect(retried.status).toBe(201);
    const id: number = retried.body.execution_id;
    expect(id, 'not the open window\'s execution').not.toBe(window);
    expect((await events(id))[0].context).toMatchObject({ retry_of: old, input: { args: { c: 'k', who: 'old' } } });
    expect((await http(t.url, 'GET', `/api/executions/${old}`)).body.retried_as).toEqual([id]);

    // The window's execution runs with its own start's payload.
    await expect.poll(async () => (await events(window)).some((e) => e.event_type === 'execution.admitted'), { timeout: 15_000 }).toBe(true);
    const admitted = (await events(window)).find((e) => e.event_type === 'execution.admitted');
    expect(admitted?.result ?? { c: 'k', who: 'window' }).toEqual({ c: 'k', who: 'window' });
    for (const e of [window, id]) await http(t.url, 'POST', `/api/executions/${e}/cancel`, { reason: 'test over' });
  });
});
