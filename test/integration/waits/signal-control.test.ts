// Signals and control at their edges, on a real server and database (DESIGN.md "Waiting and
// control"): an Idempotency-Key covers one signal to one execution and one name; concurrent
// signals to one waiting step (and a signal racing a cancel) get one 202 and 409s, never a 5xx;
// names and paths as long as their schemas allow reach their routes, on the server and through
// the gateway; a JSON array is not a body object; the step-runs view ends a wait as the machine
// does, and lists one that ended as it began; a pause or resume in the wrong state says not_waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
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
  it('a signal without a payload is one request whether sent with no body, {} or {"payload": null}', async () => {
    const id = await run('ctl/two_gates');
    await waiting(id);
    const key = { 'Idempotency-Key': 'no-payload' };
    const first = await post(`/api/executions/${id}/signals/go`, {}, key);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    for (const body of [{ payload: null }, undefined]) {
      const again = await http(s.url, 'POST', `/api/executions/${id}/signals/go`, body, key);
      expect(again.status, JSON.stringify(again.body)).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
    }
    expect(await received(id)).toHaveLength(1);
    const other = await post(`/api/executions/${id}/signals/go`, { payload: 0 }, key);
    expect(other.status).toBe(422);
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

// The longest path parameters the API's own schemas take: a signal name (128 characters), a
// step-runs step (256), a limit's `@<path>` (1000, the longest: src/body-limit.ts MAX_PARAM_CHARS),
// sent with every byte percent-encoded.
const NAME_128 = 's' + 'x'.repeat(127);
const encodeAll = (text: string) => [...Buffer.from(text)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
const INLINE_LIMIT_1000 = '@' + 'ab/'.repeat(333);
describe('long path parameters', () => {
  it('a signal name of 128 characters is sent; 129 is 422 naming it; a 256-character step and a 1000-character @<path> reach their routes', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: long_name, path: ctl/long_name }
workflow:
  - step: gate
    wait: { signal: ${NAME_128} }
`);
    const id = await run('ctl/long_name');
    await waiting(id);
    const tooLong = await post(`/api/executions/${id}/signals/${NAME_128}x`, {});
    expect(tooLong.status).toBe(422);
    expect(JSON.stringify(tooLong.body.detail.errors)).toContain('name');
    const sent = await post(`/api/executions/${id}/signals/${encodeAll(NAME_128)}`, {});
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body).toMatchObject({ status: 'delivered', signal: NAME_128 });
    expect(await finished(id)).toMatchObject({ status: 'completed' });

    const step = await get(`/api/executions/${id}/steps/${encodeAll('é'.repeat(256))}`);
    expect(step.status, JSON.stringify(step.body)).toBe(404);
    expect((await get(`/api/executions/${id}/steps/${'x'.repeat(257)}`)).status).toBe(422);

    expect(INLINE_LIMIT_1000).toHaveLength(1000);
    const limit = await get(`/api/limits/${encodeAll(INLINE_LIMIT_1000)}`);
    expect(limit.status, JSON.stringify(limit.body)).toBe(404);
    expect(limit.body.detail).toContain('ab/ab');
    // Beyond what any schema takes: the router refuses it.
    expect((await get(`/api/limits/${encodeURIComponent(INLINE_LIMIT_1000 + 'x')}`)).status).toBe(414);
  });

  it('the gateway passes them on', async () => {
    const behind = await startTestApp({ SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway({ SVC_SERVER_URL: behind.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
      const admin = bearer(await createApiToken(behind.deps.db, 'gw-admin', 'admin'));
      const r = await http(gw.url, 'POST', '/api/catalog/playbook', { content: `
apiVersion: svc/v1
metadata: { name: long_name, path: ctl/long_name }
workflow:
  - step: gate
    wait: { signal: ${NAME_128} }
` }, admin);
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const started = await http(gw.url, 'POST', '/api/run/playbook', { path: 'ctl/long_name' }, admin);
      const id = started.body.execution_id as number;
      await until('it waits', async () => ((await http(gw!.url, 'GET', `/api/executions/${id}`, undefined, admin)).body.waits ?? []).length > 0, 10_000);
      const sent = await http(gw.url, 'POST', `/api/executions/${id}/signals/${encodeAll(NAME_128)}`, {}, admin);
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      const limit = await http(gw.url, 'GET', `/api/limits/${encodeAll(INLINE_LIMIT_1000)}`, undefined, admin);
      expect(limit.status, JSON.stringify(limit.body)).toBe(404);
    } finally {
      await gw?.close();
      await behind.close();
    }
  });
});

describe('a body that is not the object a control route takes', () => {
  it('signal, retry and cancel refuse an array, null or a misspelt field with 422 naming it, and change nothing', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: array_gate, path: ctl/array_gate }
workload: { at: "2000-01-01T00:00:00Z" }
workflow:
  - step: gate
    wait: { signal: go }
`);
    const id = await run('ctl/array_gate');
    await waiting(id);
    for (const [path, body] of [[`/api/executions/${id}/signals/go`, []], [`/api/executions/${id}/signals/go`, [{ payload: 1 }]], [`/api/executions/${id}/cancel`, [1]]] as const) {
      const r = await post(path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(422);
      expect(r.body.detail).toEqual({ code: 'unprocessable', message: 'invalid body', errors: ['body: must be a JSON object, not an array'] });
    }
    // Nor is a JSON null (no body is one thing, `null` another), nor a misspelt field, which
    // would otherwise be dropped: a signal without its payload, a cancel that cascades after all.
    const refused: [string, unknown, string][] = [
      [`/api/executions/${id}/signals/go`, null, 'body: must be a JSON object'],
      [`/api/executions/${id}/cancel`, null, 'body: must be a JSON object'],
      [`/api/executions/${id}/signals/go`, { paylod: 1 }, "paylod: unknown field (did you mean 'payload'?)"],
      [`/api/executions/${id}/cancel`, { cascde: false }, "cascde: unknown field (did you mean 'cascade'?)"],
    ];
    for (const [path, body, error] of refused) {
      const r = await post(path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(422);
      expect(r.body.detail.errors).toEqual([error]);
    }
    expect(await received(id)).toEqual([]);
    expect((await get(`/api/executions/${id}`)).body.status).toBe('running');

    await register(`
apiVersion: svc/v1
metadata: { name: array_fail, path: ctl/array_fail }
workflow:
  - step: mid
    wait: { until: "{{ 'not a time' }}" }
`);
    const failed = await run('ctl/array_fail');
    expect(await finished(failed)).toMatchObject({ status: 'failed' });
    const retry = await post(`/api/executions/${failed}/retry`, ['mid']);
    expect(retry.status, JSON.stringify(retry.body)).toBe(422);
    expect(retry.body.detail.errors).toEqual(['body: must be a JSON object, not an array']);
    expect((await post(`/api/executions/${failed}/retry`, null)).body.detail.errors).toEqual(['body: must be a JSON object']);
    expect((await post(`/api/executions/${failed}/retry`, { from_stp: 'mid' })).body.detail.errors).toEqual(["from_stp: unknown field (did you mean 'from_step'?)"]);
    expect((await get(`/api/executions/${failed}`)).body.retried_as).toEqual([]);
    // An object still goes.
    expect((await post(`/api/executions/${id}/signals/go`, {})).status).toBe(202);
  });
});

describe('the step-runs view of a wait', () => {
  it('a wait that fired, was signalled, timed out or was cut short ends as /state says; while it waits it is waiting', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: runs_view, path: ctl/runs_view }
workflow:
  - step: nap
    wait: { for: 200ms }
    next: gate
  - step: gate
    wait: { signal: go }
    next: late
  - step: late
    wait: { signal: never, timeout: 300ms }
    next: [{ step: done, when: "{{ outcome.status == 'timeout' }}" }]
  - step: done
    wait: { for: 1ms }
`);
    const id = await run('ctl/runs_view');
    await until('the gate waits', async () => (await get(`/api/executions/${id}/state`)).body.steps?.gate?.status === 'waiting', 10_000);
    const during = (await get(`/api/executions/${id}/steps/gate`)).body;
    expect(during.runs).toEqual([expect.objectContaining({ status: 'waiting', started_at: expect.any(String), finished_at: null })]);
    expect((await post(`/api/executions/${id}/signals/go`, {})).status).toBe(202);
    expect(await finished(id)).toMatchObject({ status: 'completed' });
    const state = (await get(`/api/executions/${id}/state`)).body;
    for (const [step, status] of [['nap', 'completed'], ['gate', 'completed'], ['late', 'failed'], ['done', 'completed']] as const) {
      expect(state.steps[step].status, step).toBe(status);
      const view = (await get(`/api/executions/${id}/steps/${step}`)).body;
      expect(view.runs, step).toEqual([expect.objectContaining({ status, started_at: expect.any(String), finished_at: expect.any(String) })]);
      expect(Date.parse(view.runs[0].finished_at)).toBeGreaterThanOrEqual(Date.parse(view.runs[0].started_at));
    }
    // Cancelled while it waits: cut short, as /state says.
    const cut = await run('ctl/runs_view');
    await until('the gate waits', async () => (await get(`/api/executions/${cut}/state`)).body.steps?.gate?.status === 'waiting', 10_000);
    expect((await post(`/api/executions/${cut}/cancel`, {})).status).toBe(200);
    expect((await get(`/api/executions/${cut}/state`)).body.steps.gate.status).toBe('cancelled');
    expect((await get(`/api/executions/${cut}/steps/gate`)).body.runs).toEqual([expect.objectContaining({ status: 'cancelled', started_at: expect.any(String), finished_at: null })]);
  });

  it('a wait that ended as it began (a kept signal taken, an `until` not a time) is listed: a run of no seq, begun and ended when the step was entered', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: runs_at_once, path: ctl/runs_at_once }
workflow:
  - step: first
    wait: { signal: open }
    next: take
  - step: take
    wait: { signal: go, buffer: true }
    next: late
  - step: late
    wait: { until: "{{ 'not a time' }}" }
`);
    const id = await run('ctl/runs_at_once');
    await waiting(id);
    expect((await post(`/api/executions/${id}/signals/go`, { payload: { n: 1 } })).body).toMatchObject({ status: 'buffered', step: 'take' });
    expect((await post(`/api/executions/${id}/signals/open`, {})).status).toBe(202);
    expect(await finished(id)).toMatchObject({ status: 'failed' });
    // The step's entry as the runs write times, to the millisecond (the log stores microseconds).
    const entered = async (step: string) => new Date((await events(id)).find((e) => e.event_type === 'step.enter' && e.step === step)?.created_at ?? NaN).toISOString();
    const take = (await get(`/api/executions/${id}/steps/take`)).body;
    expect(take.runs).toEqual([
      expect.objectContaining({ seq: null, status: 'completed', at_once: 'kept_signal', error: null, started_at: await entered('take'), finished_at: await entered('take'), command_id: null, tasks: [] }),
    ]);
    const late = (await get(`/api/executions/${id}/steps/late`)).body;
    expect(late.runs).toEqual([
      expect.objectContaining({ seq: null, status: 'failed', at_once: 'until_failed', error: expect.objectContaining({ code: 'wait_until' }), started_at: await entered('late'), finished_at: await entered('late') }),
    ]);
    // As /state reads the steps.
    const state = (await get(`/api/executions/${id}/state`)).body;
    expect([state.steps.take.status, state.steps.late.status]).toEqual(['completed', 'failed']);
    // A wait that waited says so too: a seq, and not at once.
    expect((await get(`/api/executions/${id}/steps/first`)).body.runs).toEqual([expect.objectContaining({ seq: expect.any(Number), status: 'completed', at_once: null })]);
  });
});

describe('pause and resume in the wrong state', () => {
  it('is 409 with the code not_waiting', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: pausable, path: ctl/pausable }
workflow:
  - step: gate
    wait: { signal: go }
`);
    const id = await run('ctl/pausable');
    await waiting(id);
    const notPaused = await post(`/api/executions/${id}/resume`);
    expect(notPaused.status).toBe(409);
    expect(notPaused.body.detail).toEqual({ code: 'not_waiting', message: `execution ${id} is running: only a paused execution can be resumed` });
    expect((await post(`/api/executions/${id}/pause`)).status).toBe(200);
    const twice = await post(`/api/executions/${id}/pause`);
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toMatchObject({ code: 'not_waiting', message: expect.stringContaining('is paused') });
    expect((await post(`/api/executions/${id}/cancel`, {})).status).toBe(200);
    for (const action of ['pause', 'resume']) {
      const ended = await post(`/api/executions/${id}/${action}`);
      expect(ended.status).toBe(409);
      expect(ended.body.detail).toMatchObject({ code: 'not_waiting', message: expect.stringContaining('is cancelled') });
    }
  });
});
