// Signals and control at their edges, on a real server and database (DESIGN.md "Waiting and
// control"): an Idempotency-Key covers one signal to one execution and one name; concurrent
// signals to one waiting step (and a signal racing a cancel) get one 202 and 409s, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}, headers: Record<string, string> = {}, base = s.url) => http(base, 'POST', path, body, headers);
const get = (path: string) => http(s.url, 'GET', path);

async function register(yaml: string): Promise<void> {
  const r = await post('/api/catalog/playbook', { content: yaml });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}
async function run(path: string): Promise<number> {
  const r = await post('/api/run/playbook', { path });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id as number;
}
async function waiting(id: number): Promise<void> {
  await until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits ?? []).length > 0, 10_000);
}
async function finished(id: number): Promise<Json> {
  return until(`execution ${id} finished`, async () => {
    const body = (await get(`/api/executions/${id}`)).body;
    return ['completed', 'failed', 'cancelled'].includes(String(body.status)) && body;
  }, 10_000);
}
async function events(id: number): Promise<Json[]> {
  return (await get(`/api/events/${id}?limit=1000`)).body.events as Json[];
}
const received = async (id: number) => (await events(id)).filter((e) => e.event_type === 'signal.received');

describe('Idempotency-Key on signals', () => {
  it('covers one execution and one signal name: the same key elsewhere is another signal; a start keeps its scope', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: two_gates, path: ctl/two_gates }
workflow:
  - step: first
    wait: { signal: go }
    next: second
  - step: second
    wait: { signal: next }
`);
    const a = await run('ctl/two_gates');
    const b = await run('ctl/two_gates');
    await waiting(a);
    await waiting(b);
    const key = { 'Idempotency-Key': 'deploy-approval' };
    const body = { payload: { approved: true } };

    const toA = await post(`/api/executions/${a}/signals/go`, body, key);
    expect(toA.status, JSON.stringify(toA.body)).toBe(202);
    expect(toA.body).toMatchObject({ status: 'delivered', execution_id: a, step: 'first' });
    // The same key and body to another execution: B gets its own signal.
    const toB = await post(`/api/executions/${b}/signals/go`, body, key);
    expect(toB.status, JSON.stringify(toB.body)).toBe(202);
    expect(toB.body).toMatchObject({ status: 'delivered', execution_id: b, step: 'first' });
    expect(toB.headers.get('idempotent-replayed')).toBeNull();
    expect(await received(b)).toHaveLength(1);
    // A again (its id spelt otherwise is the same execution): A's first answer, nothing sent.
    for (const path of [`/api/executions/${a}/signals/go`, `/api/executions/0${a}/signals/go`]) {
      const again = await post(path, body, key);
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(toA.body);
    }
    // Another body to the same target is still refused.
    const other = await post(`/api/executions/${a}/signals/go`, { payload: { approved: false } }, key);
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatchObject({ code: 'idempotency_key_reused' });
    // Another signal name of A with the same key: another signal.
    const next = await post(`/api/executions/${a}/signals/next`, body, key);
    expect(next.status, JSON.stringify(next.body)).toBe(202);
    expect(next.body).toMatchObject({ status: 'delivered', execution_id: a, step: 'second' });
    expect(await received(a)).toHaveLength(2);
    expect(await finished(a)).toMatchObject({ status: 'completed' });

    // Each target has its own scope; a start's scope is its route's, as before.
    const started = await post('/api/run/playbook', { path: 'ctl/two_gates' }, { 'Idempotency-Key': 'deploy-approval' });
    expect(started.status).toBe(200);
    const scopes = (await s.deps.db.query<{ scope: string }>(`SELECT scope FROM core.idempotency_key WHERE key = 'deploy-approval' ORDER BY scope`)).rows.map((r) => r.scope);
    expect(scopes).toHaveLength(4);
    expect(scopes.filter((x) => x.startsWith('POST /api/run/playbook '))).toHaveLength(1);
    expect(scopes).toEqual(expect.arrayContaining([
      expect.stringMatching(new RegExp(`^POST /api/executions/${a}/signals/go `)),
      expect.stringMatching(new RegExp(`^POST /api/executions/${b}/signals/go `)),
      expect.stringMatching(new RegExp(`^POST /api/executions/${a}/signals/next `)),
    ]));
  });
});

describe('concurrent signals', () => {
  const gate = (name: string, after: string) => `
apiVersion: svc/v1
metadata: { name: ${name}, path: ctl/${name} }
workflow:
  - step: gate
    wait: { signal: go }
    next: after
  - step: after
${after}`;

  it('ten at once to one waiting step, on two servers: one 202, the rest 409 not_waiting, no 5xx', async () => {
    // The next step issues a command, or waits in turn: the losers' writes meet the winner's rows.
    await register(gate('race_tool', '    tool: { kind: noop }'));
    await register(gate('race_wait', '    wait: { for: 1h }'));
    const second = await startSecondServer(s);
    try {
      for (let round = 0; round < 6; round++) {
        const id = await run(round % 2 ? 'ctl/race_tool' : 'ctl/race_wait');
        await waiting(id);
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(`/api/executions/${id}/signals/go`, { payload: { i } }, {}, i % 2 ? second.url : s.url)));
        const statuses = answers.map((r) => r.status);
        expect(statuses.filter((x) => x >= 500), JSON.stringify(answers.filter((r) => r.status >= 500).map((r) => r.body))).toEqual([]);
        expect(statuses.filter((x) => x === 202)).toHaveLength(1);
        expect(statuses.filter((x) => x === 409)).toHaveLength(9);
        for (const r of answers.filter((x) => x.status === 409)) expect(r.body.detail).toMatchObject({ code: 'not_waiting' });
        expect(await received(id)).toHaveLength(1);
      }
    } finally {
      await second.close();
    }
  });

  it('a signal racing a cancel: the cancel wins or the signal does, no 5xx', async () => {
    for (let round = 0; round < 6; round++) {
      const id = await run(round % 2 ? 'ctl/race_tool' : 'ctl/race_wait');
      await waiting(id);
      const [signal, cancel] = await Promise.all([post(`/api/executions/${id}/signals/go`, {}), post(`/api/executions/${id}/cancel`, { reason: 'race' })]);
      expect([202, 409], JSON.stringify(signal.body)).toContain(signal.status);
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
      expect((await get(`/api/executions/${id}`)).body.status).toBe('cancelled');
    }
  });
});
