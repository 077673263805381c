// Retry of a retry that never began (DESIGN.md "Waiting and control": the outcomes of steps
// completed before from_step "are replayed from the old log, not run"). A retry queued on its
// playbook's concurrency limit and cancelled there began no step: retried in turn, it ran every
// step again from its entry (the first execution's completed steps too: their side effects
// twice), and its own from_step was refused, 422 "never ran step", so no retry could replay them.
// Retried, it now starts where it was to start, with the outcomes it was started with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);
const api = () => executionApi(s.url);
const replayedOf = async (id: number): Promise<string[]> => (await api().events(id)).filter((e) => e.event_type === 'step.replayed').map((e) => String(e.step));

// One at a time: a run with `hold` keeps the slot until it is signalled; the others fail at `bad`.
const yaml = `
apiVersion: svc/v1
metadata: { name: one_at_a_time, path: retry_unbegun/one_at_a_time }
concurrency: { limit: 1 }
workflow:
  - step: start
    next:
      - { step: hold, when: "{{ workload.hold | default(false) }}" }
      - { step: bad }
  - step: hold
    wait: { signal: go }
  - step: bad
    wait: { until: "{{ 'not a time' }}" }
`;

async function retried(id: number, body: Json = {}): Promise<Json> {
  const r = await post(`/api/executions/${id}/retry`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

describe('a retry cancelled while it was queued, retried', () => {
  it('starts from its own from_step with the outcomes it was started with; from its entry step, replays nothing', async () => {
    await api().register(yaml);
    const first = await api().run('retry_unbegun/one_at_a_time');
    expect(await api().wait(first, 10_000)).toMatchObject({ status: 'failed', error: { step: 'bad' } });
    const holder = await api().run('retry_unbegun/one_at_a_time', { hold: true });
    await until(`execution ${holder} waits`, async () => ((await get(`/api/executions/${holder}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);

    const queued = await retried(first);
    expect(queued).toMatchObject({ from_step: 'bad', replayed: ['start'] });
    const r1 = queued.execution_id as number;
    expect((await get(`/api/executions/${r1}`)).body.status).toBe('queued');
    expect((await post(`/api/executions/${r1}/cancel`)).body).toMatchObject({ status: 'cancelled' });

    // By default, and naming that step: as the cancelled retry was asked for.
    const again = await retried(r1);
    expect(again).toMatchObject({ retry_of: r1, from_step: 'bad', replayed: ['start'] });
    const named = await retried(r1, { from_step: 'bad' });
    expect(named).toMatchObject({ retry_of: r1, from_step: 'bad', replayed: ['start'] });
    // From its entry step: every step runs, as asked.
    const whole = await retried(r1, { from_step: 'start' });
    expect(whole).toMatchObject({ retry_of: r1, from_step: 'start', replayed: [] });

    expect((await post(`/api/executions/${holder}/signals/go`, { payload: {} })).status).toBe(202);
    for (const id of [again.execution_id, named.execution_id, whole.execution_id] as number[]) {
      expect(await api().wait(id, 15_000)).toMatchObject({ status: 'failed', error: { step: 'bad' } });
    }
    expect(await replayedOf(again.execution_id as number)).toEqual(['start']);
    expect(await replayedOf(named.execution_id as number)).toEqual(['start']);
    expect(await replayedOf(whole.execution_id as number)).toEqual([]);
    expect((await get(`/api/executions/${r1}`)).body.retried_as).toEqual([again.execution_id, named.execution_id, whole.execution_id]);
  });
});
