// A signal sent while no step waited for it, kept for a step that says `buffer: true` (202
// buffered), was seen nowhere but the event log: GET /api/executions/{id}/state and `svc status`
// showed no trace of it while it waited, and one no step took ended with the execution without a
// word (two sent by mistake: the step took one, the other vanished). /state now answers
// `kept_signals` (name and sender, oldest first; no payloads), and `svc status` prints them:
// `signals kept  go (by local, by local)`, once finished `signals never taken  go (by local)`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
  const reg = await http(s.url, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: kept, path: kept_signals/gate }
workflow:
  - step: start
    wait: { signal: open }
    next: take
  - step: take
    wait: { signal: go, buffer: true }
`,
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
});
afterAll(async () => {
  await s?.close();
});

const state = async (id: number): Promise<Json> => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;
const signal = async (id: number, name: string, payload: unknown) => (await http(s.url, 'POST', `/api/executions/${id}/signals/${name}`, { payload })).body;

describe('signals kept for a step that buffers them', () => {
  it('are listed by /state and svc status while kept, and those no step took once it ends', async () => {
    const id = (await http(s.url, 'POST', '/api/run/playbook', { path: 'kept_signals/gate' })).body.execution_id as number;
    await until(`execution ${id} waits`, async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
    expect(await state(id)).toMatchObject({ kept_signals: [] });
    expect(await signal(id, 'go', { n: 1 })).toMatchObject({ status: 'buffered', step: 'take' });
    expect(await signal(id, 'go', { n: 2 })).toMatchObject({ status: 'buffered', step: 'take' });
    expect((await state(id)).kept_signals).toEqual([{ signal: 'go', by: 'local' }, { signal: 'go', by: 'local' }]);
    const running = await runSvc(['status', String(id)], { SVC_SERVER_URL: s.url });
    expect(running.code, running.stderr).toBe(0);
    expect(running.stdout).toMatch(/\n {2}signals kept +go \(by local, by local\)\n/);

    expect(await signal(id, 'open', null)).toMatchObject({ status: 'delivered', step: 'start' });
    const done = await until(`execution ${id} completed`, async () => {
      const body = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
      return body.status === 'completed' && body;
    }, 10_000);
    // The step took the oldest; the other was never taken.
    expect(done.result).toEqual({ n: 1 });
    expect((await state(id)).kept_signals).toEqual([{ signal: 'go', by: 'local' }]);
    const finished = await runSvc(['status', String(id)], { SVC_SERVER_URL: s.url });
    expect(finished.stdout).toMatch(/\n {2}signals never taken +go \(by local\)\n/);
  });
});
