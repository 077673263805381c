// Retry from a step after a cycle of steps (DESIGN.md "Waiting and control": the outcomes of steps
// completed before from_step "are replayed from the old log, not run"). Only a step's first run
// took its recorded outcome (its last one): a step the cycle ran three times ran twice again in the
// retry. Here an approval asked for three times (a cycle on `vars.n`) was asked for again: the
// retry from the failed step after it waited for a second approval instead of failing at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { MAX_REPLAYED_RUN_BYTES } from '../../../src/engine/retry-execution.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);
const eventsOf = (id: number): Promise<Json[]> => executionApi(s.url).events(id);
const status = async (id: number): Promise<Json> => (await get(`/api/executions/${id}`)).body;
const finished = (id: number): Promise<Json> => executionApi(s.url).wait(id, 10_000);
async function waitsForApproval(id: number): Promise<void> {
  await until(`execution ${id} waits for approval`, async () => ((await status(id)).waits as Json[] | undefined)?.[0]?.signal === 'approval', 10_000);
}

// `approve` is asked three times (n 0, 1, 2); then `finish` fails on a payload whose `at` is no time.
const yaml = `
apiVersion: svc/v1
metadata: { name: batches, path: retry_cycle/batches }
workflow:
  - step: start
    next: [ { step: approve, set: { n: 0 } } ]
  - step: approve
    wait: { signal: approval }
    next:
      - { step: approve, when: "{{ vars.n < 2 }}", set: { n: "{{ vars.n + 1 }}" } }
      - { step: finish }
  - step: finish
    wait: { until: "{{ workload.at }}" }
`;

describe('retry after a cycle of steps', () => {
  it('replays every run of the cycle, each with its own outcome; from a step inside the cycle, that step runs again', async () => {
    const reg = await post('/api/catalog/playbook', { content: yaml });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const started = await post('/api/run/playbook', { path: 'retry_cycle/batches', payload: { at: 'not a time' } });
    const first = started.body.execution_id as number;
    for (const batch of [1, 2, 3]) {
      await waitsForApproval(first);
      const sent = await post(`/api/executions/${first}/signals/approval`, { payload: { batch } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    }
    expect(await finished(first)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'finish' } });

    const retried = await post(`/api/executions/${first}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ retry_of: first, from_step: 'finish', replayed: ['start', 'approve'] });
    const second = retried.body.execution_id as number;
    // No approval is asked for again: it fails at `finish` at once, as the old one did.
    expect(await finished(second)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'finish' } });
    const events = await eventsOf(second);
    expect(events.map((e) => e.event_type)).not.toContain('signal.awaited');
    expect(events.filter((e) => e.event_type === 'step.replayed').map((e) => [e.step, e.result])).toEqual([
      ['start', null],
      ['approve', { batch: 1 }],
      ['approve', { batch: 2 }],
      ['approve', { batch: 3 }],
    ]);

    // A retry of the retry replays the same runs.
    const again = await post(`/api/executions/${second}/retry`);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    const third = again.body.execution_id as number;
    expect(await finished(third)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'finish' } });
    expect((await eventsOf(third)).filter((e) => e.event_type === 'step.replayed').map((e) => e.step)).toEqual(['start', 'approve', 'approve', 'approve']);

    // Runs past a step's first replay while their outcomes come to at most MAX_REPLAYED_RUN_BYTES
    // (they are the retry's input, in its snapshot): here the third approval's would not fit (an
    // outcome of a signal's step holds its payload twice: as its result and in its `signal`).
    const big = await post('/api/run/playbook', { path: 'retry_cycle/batches', payload: { at: 'not a time' } });
    const bulky = big.body.execution_id as number;
    const filler = 'x'.repeat(MAX_REPLAYED_RUN_BYTES * 0.3);
    for (const batch of [1, 2, 3]) {
      await waitsForApproval(bulky);
      expect((await post(`/api/executions/${bulky}/signals/approval`, { payload: { batch, filler } })).status).toBe(202);
    }
    expect(await finished(bulky)).toMatchObject({ status: 'failed', error: { code: 'wait_until' } });
    const bounded = await post(`/api/executions/${bulky}/retry`);
    expect(bounded.status, JSON.stringify(bounded.body)).toBe(201);
    const fifth = bounded.body.execution_id as number;
    await waitsForApproval(fifth);
    expect((await eventsOf(fifth)).filter((e) => e.event_type === 'step.replayed').map((e) => [e.step, (e.result as Json | null)?.batch ?? null])).toEqual([
      ['start', null],
      ['approve', 1],
      ['approve', 2],
    ]);
    expect((await post(`/api/executions/${fifth}/cancel`)).body).toMatchObject({ status: 'cancelled' });

    // From `approve`, inside the cycle: it is asked for again (all three times); `start` is replayed.
    const fromCycle = await post(`/api/executions/${first}/retry`, { from_step: 'approve' });
    expect(fromCycle.status, JSON.stringify(fromCycle.body)).toBe(201);
    expect(fromCycle.body).toMatchObject({ from_step: 'approve', replayed: ['start'] });
    const fourth = fromCycle.body.execution_id as number;
    await waitsForApproval(fourth);
    expect((await post(`/api/executions/${fourth}/cancel`)).body).toMatchObject({ status: 'cancelled' });
  });
});
