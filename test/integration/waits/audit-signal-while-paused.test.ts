// A signal sent to a paused execution (docs/playbook-dsl.md, Waiting; docs/operations.md, Pause
// and resume): taken as while running, also once the step's timeout has passed, since that
// timeout waits for the resume like any timer; the wait never times out afterwards.
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

describe('a signal to a paused execution', () => {
  it('is delivered past the step timeout, which the pause held; the ok arc is taken and nothing times out', async () => {
    const reg = await post('/api/catalog/playbook', {
      content: `
apiVersion: svc/v1
metadata: { name: paused_signal, path: audit/paused_signal }
workflow:
  - step: approve
    wait: { signal: go, timeout: 1s }
    next:
      - { step: yes, when: "{{ outcome.status == 'ok' }}" }
      - { step: expired, when: "{{ outcome.status == 'timeout' }}" }
  - step: yes
  - step: expired
`,
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const id = Number((await post('/api/run/playbook', { path: 'audit/paused_signal' })).body.execution_id);
    await until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length, 10_000);
    expect((await post(`/api/executions/${id}/pause`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1800)); // past the timeout: held for the resume
    const sent = await post(`/api/executions/${id}/signals/go`, { payload: { ok: true } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body).toMatchObject({ status: 'delivered', step: 'approve' });
    const types = ((await get(`/api/events/${id}?limit=100`)).body.events as Json[]).map((e) => e.event_type);
    expect(types).toContain('signal.received');
    expect(types).not.toContain('wait.timed_out');
    const state = (await get(`/api/executions/${id}/state`)).body;
    expect(state.steps.approve).toMatchObject({ status: 'completed', outcome: { status: 'ok' } });
    expect(state.steps.expired.status).not.toBe('completed');
  });
});
