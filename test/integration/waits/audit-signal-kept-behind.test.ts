// A signal no step waited for was kept (202 buffered) whenever any step of the playbook said
// `buffer: true`, even one the execution had left behind with no arc back to it: the answer named
// that step ("to step first"), nothing ever took the signal, and the sender was never told.
// Now only a step still ahead keeps it (the nearest is named); none ahead is 409 not_waiting.
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

async function start(path: string, yaml: string): Promise<number> {
  const reg = await post('/api/catalog/playbook', { content: yaml });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  const id = Number((await post('/api/run/playbook', { path })).body.execution_id);
  await waitsAt(id, 'first');
  return id;
}
/** Until step `step` waits (a signal or a timer row). */
async function waitsAt(id: number, step: string): Promise<void> {
  await until(`execution ${id} waits at ${step}`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.some((w) => w.step === step), 10_000);
}
const goes = async (id: number) => ((await get(`/api/events/${id}?limit=1000`)).body.events as Json[]).filter((e) => e.event_type === 'signal.received' && (e.context as Json).signal === 'go');

describe('a signal kept for a step that waits later (buffer: true)', () => {
  it('is kept for the nearest such step ahead, and refused once every one is behind', async () => {
    const id = await start('audit/kept_behind', `
apiVersion: svc/v1
metadata: { name: kept_behind, path: audit/kept_behind }
workflow:
  - step: first
    wait: { signal: go, buffer: true }
    next: middle
  - step: middle
    wait: { signal: hold }
    next: last
  - step: last
    wait: { signal: go, buffer: true }
    next: after
  - step: after
    wait: { signal: hold }
`);
    expect((await post(`/api/executions/${id}/signals/go`)).body).toMatchObject({ status: 'delivered', step: 'first' });
    await waitsAt(id, 'middle');
    // first is behind: the signal is for last, which is ahead (it was named first before).
    const kept = await post(`/api/executions/${id}/signals/go`, { payload: 'second' });
    expect(kept.status, JSON.stringify(kept.body)).toBe(202);
    expect(kept.body).toMatchObject({ status: 'buffered', step: 'last' });
    expect((await post(`/api/executions/${id}/signals/hold`)).status).toBe(202);
    await waitsAt(id, 'after');
    const state = (await get(`/api/executions/${id}/state`)).body;
    expect(state.steps.last).toMatchObject({ status: 'completed', outcome: { status: 'ok' } });
    expect(state.kept_signals).toEqual([]);

    // Both steps that keep go are behind now: nothing would take it.
    const behind = await post(`/api/executions/${id}/signals/go`, { payload: 'third' });
    expect(behind.status, JSON.stringify(behind.body)).toBe(409);
    expect(behind.body.detail).toMatchObject({ code: 'not_waiting' });
    expect(behind.body.detail.message).toContain('no step that keeps it, first, last, is ahead of it');
    expect(await goes(id)).toHaveLength(2);
    expect((await get(`/api/executions/${id}/state`)).body.kept_signals).toEqual([]);
    expect((await post(`/api/executions/${id}/signals/hold`)).status).toBe(202);
    expect((await until('completed', async () => (await get(`/api/executions/${id}`)).body.status === 'completed', 10_000))).toBe(true);
  });

  it('is kept for a step behind that an arc leads back to (whatever its when), which takes it', async () => {
    const id = await start('audit/kept_cycle', `
apiVersion: svc/v1
metadata: { name: kept_cycle, path: audit/kept_cycle }
workflow:
  - step: first
    wait: { signal: go, buffer: true }
    next: check
  - step: check
    wait: { signal: again }
    next:
      - { step: first, when: "{{ signal.payload.loop }}" }
      - { step: done }
  - step: done
`);
    expect((await post(`/api/executions/${id}/signals/go`)).body).toMatchObject({ status: 'delivered', step: 'first' });
    await waitsAt(id, 'check');
    const kept = await post(`/api/executions/${id}/signals/go`, { payload: 'for the second round' });
    expect(kept.status, JSON.stringify(kept.body)).toBe(202);
    expect(kept.body).toMatchObject({ status: 'buffered', step: 'first' });
    expect((await post(`/api/executions/${id}/signals/again`, { payload: { loop: true } })).status).toBe(202);
    // first took the kept signal at once and check waits again.
    await until('check waits again', async () => ((await get(`/api/events/${id}?limit=1000`)).body.events as Json[]).filter((e) => e.event_type === 'signal.awaited' && e.step === 'check').length === 2, 10_000);
    expect((await get(`/api/executions/${id}/state`)).body.kept_signals).toEqual([]);
    expect((await post(`/api/executions/${id}/signals/again`, { payload: { loop: false } })).status).toBe(202);
    expect((await until('completed', async () => (await get(`/api/executions/${id}`)).body.status === 'completed', 10_000))).toBe(true);
  });
});
