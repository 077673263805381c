// Waiting and control on a real server, worker process and database (DESIGN.md "Waiting and
// control"): timers that hold no worker, signals with approval roles, timeouts taking their arc,
// idempotent signals, buffered signals, pause and resume of a loop in flight, cancel without cascade.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
let viewer: Record<string, string>;
let operator: Record<string, string>;
let admin: Record<string, string>;
beforeAll(async () => {
  s = await startWorkerStack({ concurrency: 4, env: { SVC_AUTH: 'token' } });
  viewer = bearer(await createApiToken(s.deps.db, 'viewer-1', 'viewer'));
  operator = bearer(await createApiToken(s.deps.db, 'operator-1', 'operator'));
  admin = bearer(await createApiToken(s.deps.db, 'admin-1', 'admin'));
});
afterAll(async () => {
  await s?.close();
});

const as = (headers: Record<string, string>) => ({
  post: (path: string, body?: unknown, extra: Record<string, string> = {}) => http(s.url, 'POST', path, body ?? {}, { ...headers, ...extra }),
  get: (path: string) => http(s.url, 'GET', path, undefined, headers),
});

async function register(yaml: string): Promise<void> {
  const r = await as(admin).post('/api/catalog/playbook', { content: yaml });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}
async function run(path: string, payload: Json = {}): Promise<number> {
  const r = await as(operator).post('/api/run/playbook', { path, payload });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id as number;
}
async function finished(id: number, timeoutMs = 20_000): Promise<Json> {
  let last: Json = {};
  await until(`execution ${id} finished`, async () => {
    last = (await as(viewer).get(`/api/executions/${id}`)).body;
    return ['completed', 'failed', 'cancelled'].includes(String(last.status));
  }, timeoutMs);
  return last;
}
async function events(id: number): Promise<Json[]> {
  return (await as(viewer).get(`/api/events/${id}?limit=1000`)).body.events as Json[];
}
async function waiting(id: number): Promise<Json> {
  let body: Json = {};
  await until(`execution ${id} waits`, async () => {
    body = (await as(viewer).get(`/api/executions/${id}`)).body;
    return Array.isArray(body.waits) && body.waits.length > 0;
  }, 10_000);
  return body;
}

describe('timers', () => {
  it('a step waits for its time holding no worker, then goes on; the wait is visible while it lasts', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: timer, path: waits/timer }
workflow:
  - step: start
    wait: { for: 1500ms }
    next: after
  - step: after
    tool: { kind: noop }
`);
    const t0 = Date.now();
    const id = await run('waits/timer');
    const during = await waiting(id);
    expect(during.status).toBe('running');
    expect(during.waits).toEqual([expect.objectContaining({ step: 'start', kind: 'timer', signal: null, wake_at: expect.any(String) })]);
    const wakeAt = Date.parse(String((during.waits as Json[])[0].wake_at));
    expect(wakeAt - t0).toBeGreaterThan(1000);
    const state = (await as(viewer).get(`/api/executions/${id}/state`)).body;
    expect(state.steps.start).toMatchObject({ status: 'waiting', wait: { kind: 'timer', wake_at: (during.waits as Json[])[0].wake_at } });
    expect(state.pending_commands).toBe(0);
    // No command exists for the waiting step: no worker slot is held.
    expect((await s.deps.db.query('SELECT count(*)::int AS n FROM core.command WHERE execution_id = $1', [id])).rows[0].n).toBe(0);
    expect(await finished(id)).toMatchObject({ status: 'completed', waits: [] });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    const types = (await events(id)).map((e) => e.event_type);
    expect(types.filter((t) => t === 'timer.fired')).toHaveLength(1);
    expect(types.indexOf('timer.set')).toBeLessThan(types.indexOf('timer.fired'));
  });

  it('until: a template giving a time; one that is not a time fails the step with wait_until', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: until, path: waits/until }
workload: { at: "2000-01-01T00:00:00Z" }
workflow:
  - step: start
    wait: { until: "{{ workload.at }}" }
`);
    expect(await finished(await run('waits/until'))).toMatchObject({ status: 'completed' });
    const bad = await finished(await run('waits/until', { at: 'tomorrow' }));
    expect(bad).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'start' } });
    // Past the year 9999, at the start and after a worker's report: the step fails, the start and
    // the report are answered (they were 500s, and the execution stayed running).
    expect(await finished(await run('waits/until', { at: 253_402_300_800_000 }))).toMatchObject({ status: 'failed', error: { code: 'wait_until' } });
    await register(`
apiVersion: svc/v1
metadata: { name: until-later, path: waits/until-later }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: later
  - step: later
    wait: { until: "{{ workload.at }}" }
`);
    expect(await finished(await run('waits/until-later', { at: '+275760-09-13T00:00:00Z' }))).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'later' } });
  });
});

const approval = `
apiVersion: svc/v1
metadata: { name: approval, path: waits/approval }
workflow:
  - step: start
    wait: { signal: approval, timeout: "{{TIMEOUT}}", approval: { roles: [admin] } }
    next:
      - { step: deploy, when: "{{ outcome.status == 'ok' and signal.payload.approved }}" }
      - { step: timed_out, when: "{{ outcome.status == 'timeout' }}" }
      - { step: rejected }
  - step: deploy
    tool: { kind: noop }
  - step: rejected
    tool: { kind: noop }
  - step: timed_out
    tool: { kind: noop }
`;

describe('signals and approvals', () => {
  it('a wrong role is 403, the right one continues down the approved arc; the same key twice is one signal', async () => {
    await register(approval.replace('{{TIMEOUT}}', '1h'));
    const id = await run('waits/approval');
    const during = await waiting(id);
    expect(during.waits).toEqual([expect.objectContaining({ step: 'start', kind: 'signal', signal: 'approval', approval_roles: ['admin'] })]);
    const path = `/api/executions/${id}/signals/approval`;
    const denied = await as(operator).post(path, { payload: { approved: true } });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatchObject({ code: 'forbidden', message: expect.stringContaining('admin') });
    expect((await as(viewer).post(path, { payload: { approved: true } })).status).toBe(403);
    const key = { 'Idempotency-Key': `approve-${id}` };
    const sent = await as(admin).post(path, { payload: { approved: true } }, key);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body).toMatchObject({ status: 'delivered', execution_id: id, signal: 'approval', step: 'start' });
    const again = await as(admin).post(path, { payload: { approved: true } }, key);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(sent.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const done = await finished(id);
    expect(done.status).toBe('completed');
    const log = await events(id);
    const received = log.filter((e) => e.event_type === 'signal.received');
    expect(received).toHaveLength(1);
    expect(received[0].context).toMatchObject({ signal: 'approval', by: 'admin-1', requested_by: { sub: 'admin-1', role: 'admin' } });
    expect(log.filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['start', 'deploy']);
    // Over: no step waits for it any more.
    const late = await as(admin).post(path, { payload: { approved: true } });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatchObject({ code: 'not_waiting' });
  });

  it('a rejection takes the arc without when; a timeout takes the timeout arc', async () => {
    await register(approval.replace('{{TIMEOUT}}', '1h'));
    const rejected = await run('waits/approval');
    await waiting(rejected);
    expect((await as(admin).post(`/api/executions/${rejected}/signals/approval`, { payload: { approved: false } })).status).toBe(202);
    await finished(rejected);
    expect((await events(rejected)).filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['start', 'rejected']);

    await register(approval.replace('{{TIMEOUT}}', '1s'));
    const late = await run('waits/approval');
    expect(await finished(late)).toMatchObject({ status: 'completed' });
    const log = await events(late);
    expect(log.filter((e) => e.event_type === 'wait.timed_out')).toHaveLength(1);
    expect(log.filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['start', 'timed_out']);
    expect(log.find((e) => e.event_type === 'step.exit' && e.step === 'start')?.context).toMatchObject({ status: 'timeout' });
  });

  it('the example deploy (examples/approval.yaml): a signal sent without a payload rejects it, not fails it', async () => {
    await register(readFileSync('examples/approval.yaml', 'utf8'));
    const id = await run('examples/approval', { version: '1.4.2' });
    await waiting(id);
    expect((await as(admin).post(`/api/executions/${id}/signals/approval`, {})).status).toBe(202);
    expect(await finished(id)).toMatchObject({ status: 'completed' });
    expect((await events(id)).filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['start', 'approve', 'rejected']);
  });

  it('a signal for a step not waiting is 409; with buffer: true it is kept until the step waits', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: buffered, path: waits/buffered }
workflow:
  - step: start
    tool: { kind: shell, command: "sleep 1" }
    next: gate
  - step: gate
    wait: { signal: go, buffer: true }
    next: [{ step: done, when: "{{ signal.payload.n == 3 }}" }]
  - step: done
    tool: { kind: noop }
`);
    const id = await run('waits/buffered');
    expect((await as(operator).post(`/api/executions/${id}/signals/other`, {})).status).toBe(409);
    const kept = await as(operator).post(`/api/executions/${id}/signals/go`, { payload: { n: 3 } });
    expect(kept.status, JSON.stringify(kept.body)).toBe(202);
    expect(kept.body).toMatchObject({ status: 'buffered', step: 'gate' });
    expect(await finished(id)).toMatchObject({ status: 'completed', result: null });
    expect((await events(id)).filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['start', 'gate', 'done']);
  });

  it("signals kept early reach only a step that keeps them and admits their sender: an operator's never pass an admins' approval", async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: kept_roles, path: waits/kept-roles }
workflow:
  - step: start
    tool: { kind: shell, command: "sleep 1" }
    next: first
  - step: first
    wait: { signal: approval, buffer: true, timeout: 1h }
    next: unkept
  - step: unkept
    wait: { signal: approval, timeout: 1h }
    next: admins
  - step: admins
    wait: { signal: approval, buffer: true, timeout: 1h, approval: { roles: [admin] } }
    next: deploy
  - step: deploy
    tool: { kind: noop }
`);
    const id = await run('waits/kept-roles');
    const path = `/api/executions/${id}/signals/approval`;
    for (let i = 0; i < 3; i++) {
      const kept = await as(operator).post(path, { payload: { n: i } });
      expect(kept.status, JSON.stringify(kept.body)).toBe(202);
      expect(kept.body).toMatchObject({ status: 'buffered', step: 'first' });
    }
    // `first` takes one; `unkept` (no buffer) and `admins` (admins only) take none of the rest.
    await until(`execution ${id} waits at unkept`, async () => ((await as(viewer).get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.[0]?.step === 'unkept', 15_000);
    const toUnkept = await as(operator).post(path, { payload: { n: 'unkept' } });
    expect(toUnkept.body).toMatchObject({ status: 'delivered', step: 'unkept' });
    await until(`execution ${id} waits at admins`, async () => ((await as(viewer).get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.[0]?.step === 'admins', 10_000);
    expect((await as(operator).post(path, { payload: { n: 'late' } })).status).toBe(403);
    expect((await as(viewer).get(`/api/executions/${id}`)).body.status).toBe('running');
    // An admin's passes it.
    const byAdmin = await as(admin).post(path, { payload: { n: 'admin' } });
    expect(byAdmin.body).toMatchObject({ status: 'delivered', step: 'admins' });
    expect(await finished(id)).toMatchObject({ status: 'completed' });
    const exits = (await events(id)).filter((e) => e.event_type === 'step.exit').map((e) => [e.step, e.result]);
    expect(exits).toEqual([['start', expect.anything()], ['first', { n: 0 }], ['unkept', { n: 'unkept' }], ['admins', { n: 'admin' }], ['deploy', null]]);
  });
});

describe('pause and resume', () => {
  it('paused while a loop is in flight: no command is issued after the pause event, the rest after resume', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: paused_loop, path: waits/paused_loop }
workflow:
  - step: start
    loop: { in: [1, 2, 3, 4, 5, 6], mode: parallel, max_in_flight: 2 }
    tool: { kind: shell, command: "sleep 0.4" }
    next: end
  - step: end
    tool: { kind: noop }
`);
    const id = await run('waits/paused_loop');
    await until('a command issued', async () => (await events(id)).some((e) => e.event_type === 'command.issued'), 10_000);
    const paused = await as(operator).post(`/api/executions/${id}/pause`);
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body).toEqual({ execution_id: id, status: 'paused' });
    expect((await as(operator).post(`/api/executions/${id}/pause`)).status).toBe(409);
    // The two in flight finish and are recorded; nothing new goes out.
    await new Promise((r) => setTimeout(r, 1500));
    const held = await events(id);
    const pauseAt = held.findIndex((e) => e.event_type === 'execution.paused');
    expect(held.slice(pauseAt).filter((e) => e.event_type === 'command.issued')).toEqual([]);
    expect(held.slice(pauseAt).some((e) => e.event_type === 'command.completed')).toBe(true);
    expect((await as(viewer).get(`/api/executions/${id}`)).body.status).toBe('paused');
    expect((await as(viewer).get(`/api/executions?status=paused`)).body.executions.map((e: Json) => e.execution_id)).toContain(id);

    const resumed = await as(operator).post(`/api/executions/${id}/resume`);
    expect(resumed.body).toEqual({ execution_id: id, status: 'running' });
    expect(await finished(id)).toMatchObject({ status: 'completed' });
    const log = await events(id);
    const resumeAt = log.findIndex((e) => e.event_type === 'execution.resumed');
    expect(log.slice(resumeAt).filter((e) => e.event_type === 'command.issued').length).toBeGreaterThan(0);
    expect(log.filter((e) => e.event_type === 'loop.item')).toHaveLength(6);
    expect((await as(operator).post(`/api/executions/${id}/resume`)).status).toBe(409);
  });

  it("a paused execution's due timer waits for the resume", async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: paused_timer, path: waits/paused_timer }
workflow:
  - step: start
    wait: { for: 500ms }
`);
    const id = await run('waits/paused_timer');
    expect((await as(operator).post(`/api/executions/${id}/pause`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await as(viewer).get(`/api/executions/${id}`)).body).toMatchObject({ status: 'paused', waits: [expect.objectContaining({ kind: 'timer' })] });
    expect((await events(id)).some((e) => e.event_type === 'timer.fired')).toBe(false);
    expect((await as(operator).post(`/api/executions/${id}/resume`)).status).toBe(200);
    expect(await finished(id)).toMatchObject({ status: 'completed' });
  });

  it('records a reason given to a pause or a resume in its event; another field is refused, naming it, and pauses nothing', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: paused_reason, path: waits/paused_reason }
workflow:
  - step: start
    wait: { for: 300ms }
`);
    const id = await run('waits/paused_reason');
    const misspelt = await as(operator).post(`/api/executions/${id}/pause`, { reasn: 'maintenance' });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.detail.errors).toEqual([expect.stringMatching(/^reasn: unknown field \(did you mean 'reason'\?\)/)]);
    expect((await events(id)).some((e) => e.event_type === 'execution.paused')).toBe(false);
    expect((await as(operator).post(`/api/executions/${id}/pause`, { reason: 'database maintenance' })).status).toBe(200);
    expect((await as(operator).post(`/api/executions/${id}/resume`, { reason: 'maintenance over' })).status).toBe(200);
    expect(await finished(id)).toMatchObject({ status: 'completed' });
    const log = await events(id);
    expect(log.find((e) => e.event_type === 'execution.paused')?.context).toMatchObject({ reason: 'database maintenance', requested_by: expect.anything() });
    expect(log.find((e) => e.event_type === 'execution.resumed')?.context).toMatchObject({ reason: 'maintenance over' });
  });
});

describe('cancel', () => {
  it("a cancelled execution's timers never fire; cascade false leaves its children running", async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: child, path: waits/child }
workflow:
  - step: start
    wait: { for: 1s }
`);
    await register(`
apiVersion: svc/v1
metadata: { name: parent, path: waits/parent }
workflow:
  - step: start
    tool: { kind: playbook, path: waits/child }
`);
    const parent = await run('waits/parent');
    let child = 0;
    await until('the child started', async () => {
      const list = (await as(viewer).get(`/api/executions?parent=${parent}`)).body.executions as Json[];
      child = Number(list[0]?.execution_id ?? 0);
      return child > 0;
    }, 10_000);
    const c = await as(operator).post(`/api/executions/${parent}/cancel`, { reason: 'not needed', cascade: false });
    expect(c.body).toMatchObject({ status: 'cancelled' });
    expect(await finished(child)).toMatchObject({ status: 'completed' });

    const alone = await run('waits/child');
    await waiting(alone);
    expect((await as(operator).post(`/api/executions/${alone}/cancel`, { reason: 'stop' })).body).toMatchObject({ status: 'cancelled' });
    expect((await as(viewer).get(`/api/executions/${alone}`)).body.waits).toEqual([]);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await events(alone)).some((e) => e.event_type === 'timer.fired')).toBe(false);
  });
});
