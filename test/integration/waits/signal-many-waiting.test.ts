// Two steps waiting for one signal name (parallel branches), two signals sent at once
// (DESIGN.md "Waiting and control": 409 only when no step waits for it): each goes to a step.
// Both were aimed at the step that had waited longest, read before routing; the one routed second
// found that wait over and answered 409 not_waiting while the other step still waited.
// A signal aimed at the buffer (no step waited when it was read) that met its step already
// waiting was kept beside it: answered 202 buffered, never taken (21 of 80 on a real server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeEvents } from '../../../actors/route-events.ts';
import { EVENT } from '../../../machines/event-types.ts';
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

describe('signals at once to two steps waiting for the same name', () => {
  it('each is delivered to a step of its own; a third is 409 not_waiting', async () => {
    const reg = await post('/api/catalog/playbook', {
      content: `
apiVersion: svc/v1
metadata: { name: two_waiting, path: many/two_waiting }
workflow:
  - step: start
    next: { mode: inclusive, arcs: [ { step: left }, { step: right } ] }
  - step: left
    wait: { signal: go }
  - step: right
    wait: { signal: go }
`,
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    for (let round = 0; round < 4; round++) {
      const started = await post('/api/run/playbook', { path: 'many/two_waiting' });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const id = started.body.execution_id as number;
      await until(`execution ${id} waits twice`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 2, 10_000);
      const answers = await Promise.all([1, 2].map((n) => post(`/api/executions/${id}/signals/go`, { payload: n })));
      expect(answers.map((r) => r.status), JSON.stringify(answers.map((r) => r.body))).toEqual([202, 202]);
      expect(answers.map((r) => r.body.step).sort()).toEqual(['left', 'right']);
      const third = await post(`/api/executions/${id}/signals/go`, { payload: 3 });
      expect(third.status).toBe(409);
      expect(third.body.detail).toMatchObject({ code: 'not_waiting' });
      const done = await until(`execution ${id} finished`, async () => {
        const body = (await get(`/api/executions/${id}`)).body;
        return body.status === 'completed' && body;
      }, 10_000);
      expect(done).toMatchObject({ status: 'completed', waits: [] });
    }
  });
});

describe('a signal aimed at the buffer when its step already waits', () => {
  it('is not kept beside the waiting step: the routing refuses it, and sent again it is delivered', async () => {
    const reg = await post('/api/catalog/playbook', {
      content: `
apiVersion: svc/v1
metadata: { name: kept, path: many/kept }
workflow:
  - step: gate
    wait: { signal: go, buffer: true }
`,
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const started = await post('/api/run/playbook', { path: 'many/kept' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = started.body.execution_id as number;
    await until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
    // What signalExecution routes when it read the execution before the step waited.
    const { results } = await routeEvents(s.deps, [{
      execution_id: id,
      event_type: EVENT.signalReceived,
      step: null,
      context: { signal: 'go', seq: null, by: 'local', buffered: true },
      result: { stale: true },
    }]);
    expect(results[0]).toMatchObject({ event_id: null, error: 'not_waiting' });
    const delivered = await post(`/api/executions/${id}/signals/go`, { payload: 1 });
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(202);
    expect(delivered.body).toMatchObject({ status: 'delivered', step: 'gate' });
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status !== 'running' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed', result: 1 });
  });
});
