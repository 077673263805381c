// A retry's answer named the steps it replays (`replayed`) in an object's key order: a step named
// like a number came first (prepare_everything -> "2" -> bad answered ["2", "prepare_everything"]),
// and a retry of a retry that began no step listed them in jsonb's key order (shortest first).
// They are now named in the order their runs ended (those an unbegun retry carries: the playbook's).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const api = () => executionApi(s.url);
// One at a time: a run with `hold` keeps the slot until it is signalled; the others fail at `bad`.
const yaml = `
apiVersion: svc/v1
metadata: { name: ordered_replay, path: retry_order/one_at_a_time }
concurrency: { limit: 1 }
workflow:
  - step: prepare_everything
    next:
      - { step: hold, when: "{{ workload.hold | default(false) }}" }
      - { step: "2" }
  - step: hold
    wait: { signal: go }
  - step: "2"
    next: bad
  - step: bad
    wait: { until: "{{ 'not a time' }}" }
`;

async function retried(id: number): Promise<Json> {
  const r = await http(s.url, 'POST', `/api/executions/${id}/retry`, {});
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

it('a retry names the steps it replays in the order they ran, a retry of an unbegun one too', async () => {
  await api().register(yaml);
  const first = await api().run('retry_order/one_at_a_time');
  expect(await api().wait(first, 10_000)).toMatchObject({ status: 'failed', error: { step: 'bad' } });
  const holder = await api().run('retry_order/one_at_a_time', { hold: true });
  await until(`execution ${holder} waits`, async () => ((await http(s.url, 'GET', `/api/executions/${holder}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);

  const queued = await retried(first);
  expect(queued).toMatchObject({ from_step: 'bad', replayed: ['prepare_everything', '2'] });
  expect((await http(s.url, 'POST', `/api/executions/${queued.execution_id}/cancel`, {})).body).toMatchObject({ status: 'cancelled' });
  const again = await retried(queued.execution_id);
  expect(again).toMatchObject({ from_step: 'bad', replayed: ['prepare_everything', '2'] });

  expect((await http(s.url, 'POST', `/api/executions/${holder}/signals/go`, { payload: {} })).status).toBe(202);
  expect(await api().wait(again.execution_id, 15_000)).toMatchObject({ status: 'failed', error: { step: 'bad' } });
  const events = await api().events(again.execution_id);
  expect(events.filter((e) => e.event_type === 'step.replayed').map((e) => e.step)).toEqual(['prepare_everything', '2']);
});
