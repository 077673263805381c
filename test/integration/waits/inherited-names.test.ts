// Signal and step names that are also names an object inherits (`constructor`, `toString`,
// `hasOwnProperty`): the regexes of the DSL and the signal route allow them, and the engine keys
// kept signals and a retry's replayed outcomes by them. Read as plain properties, a step waiting
// for signal `constructor` took Object's constructor for a kept signal (its run's start answered
// 500, TypeError), and a retry replayed Object's constructor as the outcome of a step named
// `constructor` instead of running it ("step constructor failed", the step never ran).
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

async function register(content: string): Promise<void> {
  const r = await post('/api/catalog/playbook', { content });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}
async function start(path: string): Promise<number> {
  const r = await post('/api/run/playbook', { path });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id as number;
}
async function finished(id: number): Promise<Json> {
  return until(`execution ${id} finished`, async () => {
    const body = (await get(`/api/executions/${id}`)).body;
    return ['completed', 'failed', 'cancelled'].includes(String(body.status)) && body;
  }, 10_000);
}

describe('a signal named like an inherited property', () => {
  it.each(['constructor', 'toString', 'hasOwnProperty'])('%s: kept with buffer: true before its step waits, then delivered to a waiting step', async (name) => {
    await register(`
apiVersion: svc/v1
metadata: { name: inherited_${name}, path: inherited/${name} }
workflow:
  - step: start
    wait: { for: 1s }
    next: kept
  - step: kept
    wait: { signal: ${name}, buffer: true }
    next: last
  - step: last
    wait: { signal: ${name} }
`);
    const id = await start(`inherited/${name}`);
    const early = await post(`/api/executions/${id}/signals/${name}`, { payload: 'early' });
    expect(early.status, JSON.stringify(early.body)).toBe(202);
    expect(early.body).toMatchObject({ status: 'buffered', step: 'kept' });
    await until(`execution ${id} waits at last`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.[0]?.step === 'last', 10_000);
    const late = await post(`/api/executions/${id}/signals/${name}`, { payload: 'late' });
    expect(late.status, JSON.stringify(late.body)).toBe(202);
    expect(late.body).toMatchObject({ status: 'delivered', step: 'last' });
    expect(await finished(id)).toMatchObject({ status: 'completed', result: 'late' });
    const state = (await get(`/api/executions/${id}/state`)).body;
    expect(state.steps.kept).toMatchObject({ status: 'completed' });
  });
});

describe('a retry of an execution that failed at a step named like an inherited property', () => {
  it('runs that step again instead of replaying an inherited value as its outcome', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: inherited_step, path: inherited/step }
workflow:
  - step: start
    next: constructor
  - step: constructor
    wait: { until: "{{ 'not a time' }}" }
`);
    const id = await start('inherited/step');
    expect(await finished(id)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'constructor' } });
    const retried = await post(`/api/executions/${id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ from_step: 'constructor', replayed: ['start'] });
    const second = retried.body.execution_id as number;
    // It ran the step again (and failed the same way), not "step constructor failed" with no run.
    expect(await finished(second)).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'constructor' } });
    const events = (await get(`/api/events/${second}?limit=1000`)).body.events as Json[];
    expect(events.filter((e) => e.event_type === 'step.replayed').map((e) => e.step)).toEqual(['start']);
  });
});
