// Retry from the failed step (DESIGN.md "Waiting and control") of an execution that went on after
// a wait timed out: the timeout is a recorded outcome like any other, taken as it was. It was run
// again: a retry from the step after an expired approval waited for the approval once more (a
// day, with `timeout: 24h`). And a `from_step` the execution never reached was taken: every step
// that ran was replayed down the same arcs, and the retry ran nothing, not that step either.
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

async function finished(id: number): Promise<Json> {
  return until(`execution ${id} finished`, async () => {
    const body = (await get(`/api/executions/${id}`)).body;
    return ['completed', 'failed', 'cancelled'].includes(String(body.status)) && body;
  }, 10_000);
}
const eventsOf = async (id: number): Promise<Json[]> => (await get(`/api/events/${id}?limit=1000`)).body.events as Json[];

// `expired` fails (its `until` is no time): the step to retry from, after the approval timed out.
const yaml = `
apiVersion: svc/v1
metadata: { name: expiring, path: retry_wait/expiring }
workflow:
  - step: start
    next: approve
  - step: approve
    wait: { signal: approval, timeout: 1s }
    next:
      - { step: deploy, when: "{{ outcome.status == 'ok' }}" }
      - { step: expired, when: "{{ outcome.status == 'timeout' }}" }
  - step: deploy
  - step: expired
    wait: { until: "{{ 'not a time' }}" }
`;

describe('retry after a wait that timed out', () => {
  it('replays the timeout (no second wait) and runs from the failed step; a step never reached is 422 naming from_step', async () => {
    const reg = await post('/api/catalog/playbook', { content: yaml });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const started = await post('/api/run/playbook', { path: 'retry_wait/expiring' });
    const first = started.body.execution_id as number;
    expect(await finished(first)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'expired' } });

    const retried = await post(`/api/executions/${first}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ from_step: 'expired', replayed: ['start', 'approve'] });
    const second = retried.body.execution_id as number;
    expect(await finished(second)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'expired' } });
    const events = await eventsOf(second);
    expect(events.filter((e) => e.event_type === 'step.replayed').map((e) => [e.step, (e.context as Json).status])).toEqual([['start', 'ok'], ['approve', 'timeout']]);
    expect(events.map((e) => e.event_type)).not.toContain('signal.awaited');

    // deploy never ran (the approval timed out): nothing of it to retry from.
    const never = await post(`/api/executions/${first}/retry`, { from_step: 'deploy' });
    expect(never.status, JSON.stringify(never.body)).toBe(422);
    expect(never.body.detail).toMatchObject({ code: 'unprocessable', errors: [expect.stringMatching(/^from_step: step deploy did not run in execution \d+/)] });

    // From the wait itself: it waits again.
    const again = await post(`/api/executions/${first}/retry`, { from_step: 'approve' });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body).toMatchObject({ from_step: 'approve', replayed: ['start'] });
    const third = again.body.execution_id as number;
    await until(`execution ${third} waits`, async () => ((await get(`/api/executions/${third}`)).body.waits as Json[] | undefined)?.[0]?.step === 'approve', 10_000);
    expect((await post(`/api/executions/${third}/signals/approval`, { payload: 'yes' })).status).toBe(202);
    expect(await finished(third)).toMatchObject({ status: 'completed' });
  });
});
