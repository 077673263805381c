// Pausing a queued execution (docs/flow-control.md, "Pausing a queued execution"): it was 409
// not_waiting, and the docs said to cancel it and start again, which lost its place and its id.
// Paused, it keeps its admission (its place), is not admitted while paused (no slot taken, and no
// other execution of its key held back), shows `paused`, and its resume queues it again in its
// place. A cancel of it ends it and its admission. A debounced one's pause closes its window: a
// later start opens its own and runs. Real server and database; wait steps need no worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, body: unknown = {}) => http(t.url, 'POST', path, body);
const get = (path: string) => http(t.url, 'GET', path);
const statusOf = async (id: number): Promise<string> => (await get(`/api/executions/${id}`)).body.status;
const eventsOf = async (id: number): Promise<{ type: string; status: string; result: unknown }[]> =>
  ((await get(`/api/events/${id}`)).body.events as Json[]).map((e) => ({ type: String(e.event_type), status: String(e.status), result: e.result }));
const listed = async (status: string): Promise<number[]> => ((await get(`/api/executions?status=${status}`)).body.executions as Json[]).map((e) => Number(e.execution_id));
const settle = () => new Promise((r) => setTimeout(r, 1_500));

async function register(content: string): Promise<void> {
  const r = await post('/api/catalog/playbook', { content });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

// One at a time (an inline limit); each run waits for its signal `go`, holding its slot till then.
const ONE_AT_A_TIME = (path: string) => `apiVersion: svc/v1
metadata: { name: one_at_a_time, path: ${path} }
concurrency: { limit: 1 }
workflow:
  - step: gate
    wait: { signal: go }
`;
const start = async (path: string, payload: Record<string, unknown> = {}): Promise<Json> => (await post('/api/run/playbook', { path, payload })).body;
const finish = async (id: number) => {
  expect((await post(`/api/executions/${id}/signals/go`)).status).toBe(202);
  await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('completed');
};
const keyOf = async (path: string): Promise<Json> => ((await get(`/api/limits/${encodeURIComponent(`@${path}`)}`)).body.key_list as Json[])[0];

describe('pausing a queued execution', () => {
  it('keeps its place, is passed over while paused, and is queued again at its resume', async () => {
    const path = 'pauseq/limited';
    await register(ONE_AT_A_TIME(path));
    const running = Number((await start(path)).execution_id);
    await expect.poll(() => statusOf(running), { timeout: 15_000 }).toBe('running');
    const a = Number((await start(path)).execution_id);
    const b = Number((await start(path)).execution_id);
    expect([await statusOf(a), await statusOf(b)]).toEqual(['queued', 'queued']);

    const paused = await post(`/api/executions/${a}/pause`, { reason: 'hold it' });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body).toEqual({ execution_id: a, status: 'paused' });
    const view = (await get(`/api/executions/${a}`)).body;
    expect(view.status).toBe('paused');
    // Its place: the admission is kept, not admitted.
    expect(view.flow).toMatchObject({ limit: `@${path}`, admitted_at: null });
    expect(await listed('paused')).toContain(a);
    expect(await listed('queued')).not.toContain(a);
    expect(await listed('queued')).toContain(b);

    // The slot comes free: B, behind A, is admitted; A is passed over.
    await finish(running);
    await expect.poll(() => statusOf(b), { timeout: 15_000 }).toBe('running');
    await settle();
    expect(await statusOf(a)).toBe('paused');
    expect((await eventsOf(a)).map((e) => [e.type, e.status]).slice(1)).toEqual([
      ['execution.queued', 'queued'],
      ['execution.paused', 'paused'],
    ]);
    expect(await keyOf(path)).toMatchObject({ running: 1, queued: 1 });

    // Resumed while B holds the slot: queued again, in its place.
    const resumed = await post(`/api/executions/${a}/resume`);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toEqual({ execution_id: a, status: 'queued' });
    expect(await statusOf(a)).toBe('queued');
    await settle();
    expect(await statusOf(a)).toBe('queued');
    await finish(b);
    await expect.poll(() => statusOf(a), { timeout: 15_000 }).toBe('running');
    expect((await eventsOf(a)).map((e) => [e.type, e.status]).slice(2, 5)).toEqual([
      ['execution.paused', 'paused'],
      ['execution.resumed', 'queued'],
      ['execution.admitted', 'running'],
    ]);
    await finish(a);
  });

  it('takes no slot while paused though its key has room, and its cancel ends its admission', async () => {
    const path = 'pauseq/room';
    await register(ONE_AT_A_TIME(path));
    const running = Number((await start(path)).execution_id);
    await expect.poll(() => statusOf(running), { timeout: 15_000 }).toBe('running');
    const q = Number((await start(path)).execution_id);
    expect(await statusOf(q)).toBe('queued');
    expect((await post(`/api/executions/${q}/pause`)).status).toBe(200);

    await finish(running);
    await settle();
    // The key has room and nothing takes it: the paused one waits for its resume.
    expect(await statusOf(q)).toBe('paused');
    expect(await keyOf(path)).toMatchObject({ running: 0, queued: 1 });
    expect((await eventsOf(q)).map((e) => e.type)).not.toContain('execution.admitted');

    const cancelled = await post(`/api/executions/${q}/cancel`, { reason: 'not wanted' });
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    expect(await statusOf(q)).toBe('cancelled');
    expect(await keyOf(path)).toMatchObject({ running: 0, queued: 0 });
    // Nothing is left of it on the key: the next start is admitted at once.
    const next = Number((await start(path)).execution_id);
    expect(await statusOf(next)).toBe('running');
    await finish(next);
  });

  it('a paused debounced execution closes its window: a later start runs on its own, the paused one at its resume', async () => {
    const path = 'pauseq/debounced';
    await register(`apiVersion: svc/v1
metadata: { name: debounced, path: ${path} }
workload: { d: x }
debounce: { key: "{{ workload.d }}", seconds: 1 }
workflow:
  - step: gate
    wait: { signal: go }
`);
    const first = await start(path, { d: 'k', n: 1 });
    const x = Number(first.execution_id);
    expect(await statusOf(x)).toBe('queued');
    expect((await post(`/api/executions/${x}/pause`)).status).toBe(200);

    // Not joined: a window of its own, which closes and runs.
    const later = await start(path, { d: 'k', n: 2 });
    expect(later.debounced).toBeUndefined();
    const y = Number(later.execution_id);
    expect(y).not.toBe(x);
    await expect.poll(() => statusOf(y), { timeout: 15_000 }).toBe('running');
    await settle();
    expect(await statusOf(x)).toBe('paused');

    expect((await post(`/api/executions/${x}/resume`)).status).toBe(200);
    await expect.poll(() => statusOf(x), { timeout: 15_000 }).toBe('running');
    // Each start ran once, with its own payload: neither was joined (an admission's result is a joining start's payload).
    const admittedWith = async (id: number) => (await eventsOf(id)).find((e) => e.type === 'execution.admitted')?.result;
    expect(await admittedWith(x)).toBeNull();
    expect(await admittedWith(y)).toBeNull();
    await finish(x);
    await finish(y);
  });
});
