// A command issued before a pause and not yet claimed when it lands does not start while the
// execution is paused (DESIGN.md "Waiting and control": no command is issued meanwhile, running
// ones finish): a worker that comes up during the pause claims nothing of it; after the resume it
// runs, once. Before, the worker claimed and ran it during the pause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let s: TestApp;
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await worker?.stop();
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);
const events = async (id: number): Promise<Json[]> => (await get(`/api/events/${id}?limit=1000`)).body.events as Json[];

describe('pause of an execution whose command waits unclaimed', () => {
  it('no worker claims it while paused; after the resume it runs exactly once', async () => {
    const r = await post('/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: paused_unclaimed, path: waits/paused_unclaimed }
workflow:
  - step: start
    tool: { name: hello, kind: shell, command: "echo ran" }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    // No worker yet: the command stays unclaimed.
    const started = await post('/api/run/playbook', { path: 'waits/paused_unclaimed' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = started.body.execution_id as number;
    await until('its command issued', async () => (await events(id)).some((e) => e.event_type === 'command.issued'), 10_000);
    expect((await post(`/api/executions/${id}/pause`)).status).toBe(200);
    // Withdrawn while paused: a claim by id is refused too, saying why.
    const { rows } = await s.deps.db.query<{ command_id: number; status: string }>('SELECT command_id, status FROM core.command WHERE execution_id = $1', [id]);
    expect(rows).toEqual([expect.objectContaining({ status: 'PAUSED' })]);
    const byId = await http(s.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: 'w-by-id' }, { authorization: `Bearer ${s.workerToken}` });
    expect(byId.status).toBe(409);
    expect(byId.body.detail).toMatchObject({ code: 'command_paused', status: 'PAUSED' });

    worker = await startWorkerProcess(s.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: s.workerToken } });
    // Long enough for a worker's first claim and a long poll or two.
    await new Promise((res) => setTimeout(res, 3000));
    const during = await events(id);
    expect(during.map((e) => e.event_type)).not.toContain('command.claimed');
    expect(during.map((e) => e.event_type)).not.toContain('command.started');
    expect((await get(`/api/executions/${id}`)).body.status).toBe('paused');

    expect((await post(`/api/executions/${id}/resume`)).status).toBe(200);
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return ['completed', 'failed', 'cancelled'].includes(String(body.status)) && body;
    }, 20_000);
    expect(done).toMatchObject({ status: 'completed' });
    const log = await events(id);
    expect(log.filter((e) => e.event_type === 'command.started')).toHaveLength(1);
    expect(log.filter((e) => e.event_type === 'command.completed')).toHaveLength(1);
    expect(log.filter((e) => e.event_type === 'command.issued')).toHaveLength(1);
    expect(log.findIndex((e) => e.event_type === 'command.started')).toBeGreaterThan(log.findIndex((e) => e.event_type === 'execution.resumed'));
  });

  it('a cancel while paused cancels the withdrawn command: it never runs', async () => {
    // No worker: the command waits unclaimed.
    await worker?.stop();
    worker = undefined;
    const started = await post('/api/run/playbook', { path: 'waits/paused_unclaimed' });
    const id = started.body.execution_id as number;
    expect((await post(`/api/executions/${id}/pause`)).status).toBe(200);
    const { rows } = await s.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [id]);
    expect(rows).toEqual([{ status: 'PAUSED' }]);
    expect((await post(`/api/executions/${id}/cancel`)).status).toBe(200);
    const after = await s.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [id]);
    expect(after.rows).toEqual([{ status: 'CANCELLED' }]);
    expect((await get(`/api/executions/${id}`)).body.status).toBe('cancelled');
  });
});

describe('pause of an execution whose last command runs', () => {
  // docs/operations.md: a pause holds back work, not the end.
  it.each([
    ['completed', 'sleep 5; echo ran'],
    ['failed', 'sleep 5; exit 3'],
  ])('ends %s while paused when that command finishes; a resume after it is 409', async (status, command) => {
    const path = `waits/paused_last_${status}`;
    const r = await post('/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: paused_last_${status}, path: ${path} }
workflow:
  - step: start
    tool: { name: slow, kind: shell, command: "${command}" }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    worker ??= await startWorkerProcess(s.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: s.workerToken } });
    const id = (await post('/api/run/playbook', { path })).body.execution_id as number;
    // A claim writes no event (the report brings claimed and started): its row says it.
    const claimed = async () => (await s.deps.db.query('SELECT 1 FROM core.command WHERE execution_id = $1 AND claimed_at IS NOT NULL', [id])).rows.length > 0;
    await until('its command claimed', claimed, 15_000, 50);
    const paused = await post(`/api/executions/${id}/pause`);
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    const done = await until(`execution ${id} ended`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status !== 'paused' && body.status !== 'running' && body;
    }, 20_000);
    expect(done).toMatchObject({ status });
    const types = (await events(id)).map((e) => e.event_type);
    expect(types).toContain('execution.paused');
    expect(types).not.toContain('execution.resumed');
    expect((await post(`/api/executions/${id}/resume`)).status).toBe(409);
  });
});
