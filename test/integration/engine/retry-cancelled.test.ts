// Retry of a cancelled execution without from_step (docs/operations.md: an execution auto-resume
// cancelled and could not start again is left "cancelled with no successor (`svc retry` it)").
// It has no failed step, and the retry was 422 "say which step to retry from". It now goes on
// from the step the cancel cut short, the steps completed before it replayed; one cancelled
// before any step ran starts from its entry. A completed execution still needs from_step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);
const types = async (id: number): Promise<string[]> => ((await get(`/api/events/${id}?limit=1000`)).body.events as Json[]).map((e) => `${String(e.event_type)}${e.step ? ` ${String(e.step)}` : ''}`);

async function register(yaml: string): Promise<void> {
  const r = await post('/api/catalog/playbook', { content: yaml });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}
async function start(path: string): Promise<number> {
  const r = await post('/api/run/playbook', { path });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id as number;
}

describe('retry of a cancelled execution', () => {
  it('without from_step: from the step the cancel cut short, the steps before it replayed', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: cut_short, path: retry_cancelled/cut_short }
workflow:
  - step: first
    wait: { signal: one }
    next: second
  - step: second
    wait: { signal: two }
`);
    const id = await start('retry_cancelled/cut_short');
    await until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length, 10_000);
    expect((await post(`/api/executions/${id}/signals/one`, { payload: 'first ok' })).status).toBe(202);
    await until(`execution ${id} waits for two`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.[0]?.signal === 'two', 10_000);
    expect((await post(`/api/executions/${id}/cancel`, { reason: 'by mistake' })).body).toMatchObject({ status: 'cancelled' });

    const retried = await post(`/api/executions/${id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ retry_of: id, from_step: 'second', replayed: ['first'] });
    const again = retried.body.execution_id as number;
    await until(`execution ${again} waits for two`, async () => ((await get(`/api/executions/${again}`)).body.waits as Json[] | undefined)?.[0]?.signal === 'two', 10_000);
    expect(await types(again)).toContain('step.replayed first');
    expect((await post(`/api/executions/${again}/signals/two`, { payload: 'second ok' })).status).toBe(202);
    const done = await until(`execution ${again} finished`, async () => {
      const body = (await get(`/api/executions/${again}`)).body;
      return body.status !== 'running' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed', retry_of: id });
    expect((await get(`/api/executions/${id}`)).body).toMatchObject({ retried_as: [again] });
  });

  it('cancelled while queued (no step ran): from its entry step; a completed one still needs from_step (422)', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: one_at_a_time, path: retry_cancelled/one_at_a_time }
concurrency: { limit: 1 }
workflow:
  - step: only
    wait: { signal: go }
`);
    const running = await start('retry_cancelled/one_at_a_time');
    const queued = await start('retry_cancelled/one_at_a_time');
    await until(`execution ${queued} queued`, async () => (await get(`/api/executions/${queued}`)).body.status === 'queued', 10_000);
    expect((await post(`/api/executions/${queued}/cancel`)).body).toMatchObject({ status: 'cancelled' });
    const retried = await post(`/api/executions/${queued}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ retry_of: queued, from_step: 'only', replayed: [] });

    await until(`execution ${running} waits`, async () => ((await get(`/api/executions/${running}`)).body.waits as Json[] | undefined)?.length, 10_000);
    expect((await post(`/api/executions/${running}/signals/go`)).status).toBe(202);
    await until(`execution ${running} completed`, async () => (await get(`/api/executions/${running}`)).body.status === 'completed', 10_000);
    const completed = await post(`/api/executions/${running}/retry`);
    expect(completed.status).toBe(422);
    expect(completed.body.detail.errors).toEqual([expect.stringContaining('from_step')]);
  });
  it("keeps the old start's labels and priority: label filters find both, and the retry is claimed at the same priority", async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: labelled, path: retry_cancelled/labelled }
workflow:
  - step: first
    wait: { signal: go }
`);
    const r = await post('/api/run/playbook', { path: 'retry_cancelled/labelled', labels: { tenant: 'acme' }, priority: 8 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.execution_id as number;
    expect((await post(`/api/executions/${id}/cancel`, {})).body).toMatchObject({ status: 'cancelled' });
    const retried = await post(`/api/executions/${id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const again = retried.body.execution_id as number;
    expect((await get(`/api/executions/${again}`)).body.labels).toEqual({ tenant: 'acme' });
    const found = ((await get('/api/executions?label=tenant:acme&path=retry_cancelled/labelled')).body.executions as Json[]).map((e) => e.execution_id);
    expect(found.sort()).toEqual([id, again].sort());
    const started = ((await get(`/api/events/${again}?limit=1`)).body.events as Json[])[0];
    expect(started.context.input.priority).toBe(8);
    expect(started.context.retry_of).toBe(id);
  });
});
