// An execution paused under a version before migration 0047 kept its unclaimed commands PENDING
// (that version's pause withdrew nothing). Upgraded in place, the new server's workers claimed and
// ran them during the pause: 0047's trigger withdraws commands only when an execution's status
// changes, and a paused execution's does not change at the upgrade. The rows are built as the old
// version left them (the new pause, its command put back to PENDING), the upgrade's migration runs
// over them, and a real worker then claims nothing until the resume; after it the step runs once.
import { readFileSync } from 'node:fs';
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
const commandStatus = async (id: number) => (await s.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [id])).rows.map((r) => r.status);

describe('an execution paused before migration 0047, upgraded in place', () => {
  it('its unclaimed command waits for the resume, then runs once', async () => {
    const r = await post('/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: paused_old, path: upgrade/paused_old }
workflow:
  - step: start
    tool: { name: hello, kind: shell, command: "echo ran" }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const started = await post('/api/run/playbook', { path: 'upgrade/paused_old' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = started.body.execution_id as number;
    await until('its command issued', async () => (await events(id)).some((e) => e.event_type === 'command.issued'), 10_000);
    expect((await post(`/api/executions/${id}/pause`)).status).toBe(200);
    // As the old version's pause left it: the execution paused, its command still PENDING.
    await s.deps.db.query(`UPDATE core.command SET status = 'PENDING' WHERE execution_id = $1`, [id]);
    expect(await commandStatus(id)).toEqual(['PENDING']);

    // The upgrade: the migration that converts such rows runs over them.
    await s.deps.db.query(readFileSync(new URL('../../../migrations/0049_paused_before_0047.sql', import.meta.url), 'utf8'));
    expect(await commandStatus(id)).toEqual(['PAUSED']);

    worker = await startWorkerProcess(s.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: s.workerToken } });
    // Long enough for the worker's first claim and a long poll or two.
    await new Promise((res) => setTimeout(res, 3000));
    expect((await events(id)).map((e) => e.event_type)).not.toContain('command.claimed');
    expect((await get(`/api/executions/${id}`)).body.status).toBe('paused');

    expect((await post(`/api/executions/${id}/resume`)).status).toBe(200);
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return ['completed', 'failed', 'cancelled'].includes(String(body.status)) && body;
    }, 20_000);
    expect(done).toMatchObject({ status: 'completed' });
    const log = await events(id);
    expect(log.filter((e) => e.event_type === 'command.started')).toHaveLength(1);
    expect(log.findIndex((e) => e.event_type === 'command.started')).toBeGreaterThan(log.findIndex((e) => e.event_type === 'execution.resumed'));
  });
});
