// A cancelled execution whose worker was SIGKILLed while it ran its command keeps its
// concurrency slot until the worker's lease expires; the reaper's sweep then gives it back
// (migrations/0055). That sweep woke the claimers but not the admitter: the execution queued on
// the key was admitted at the admitter's next look, anywhere in its second after the sweep.
// Real server, real worker processes (each round's is killed).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess } from '../../helpers/worker-process.ts';

const STALE_SECONDS = 4;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(STALE_SECONDS) });
  expect((await http(t.url, 'PUT', '/api/limits/reaped-one', { concurrency: 1 })).status).toBe(200);
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: reaped, path: audit/reaped-slot }
concurrency: { limit: reaped-one }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: 'sleep 60' }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const eventsOf = async (id: number): Promise<Json[]> => (await http(t.url, 'GET', `/api/events/${id}?limit=100`)).body.events;
const start = async (): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/reaped-slot' })).body.execution_id;
const databaseNow = async (): Promise<number> => (await t.deps.db.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0].now.getTime();

it("the sweep that gives back a killed worker's kept slot admits the next queued execution at once", async () => {
  const delays: number[] = [];
  for (let round = 0; round < 4; round++) {
    const worker = await startWorkerProcess(t.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: t.workerToken } });
    const first = await start();
    await until('its task is claimed', async () => (await t.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [first])).rows[0]?.status === 'CLAIMED', 20_000, 50);
    await worker.kill();
    const killedAt = Date.now();
    expect((await http(t.url, 'POST', `/api/executions/${first}/cancel`, { reason: 'round' })).status).toBe(200);
    const next = await start();
    expect((await http(t.url, 'GET', `/api/executions/${next}`)).body.status).toBe('queued');
    // Past the killed pool's lease, a sweep gives the slot back; each round elsewhere in the admitter's second.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + (STALE_SECONDS + 2) * 1000 + round * 290 - Date.now())));
    const sweptAt = await databaseNow();
    const swept = await http(t.url, 'POST', '/api/admin/command_reaper/sweep', {});
    expect(swept.status, JSON.stringify(swept.body)).toBe(200);
    const admitted = await until('the next admitted', async () => (await eventsOf(next)).find((e) => e.event_type === 'execution.admitted'), 20_000, 50);
    delays.push(Date.parse(admitted.context.at) - sweptAt);
    expect((await http(t.url, 'POST', `/api/executions/${next}/cancel`, { reason: 'round over' })).status).toBe(200);
    await until('the slot is free again', async () => (await http(t.url, 'GET', '/api/limits/reaped-one')).body.running === 0, 20_000, 50);
  }
  // Before: the admitter's next look, anywhere in its second.
  expect(Math.max(...delays), `ms from the sweep to the admission: ${delays.join(', ')}`).toBeLessThan(300);
}, 180_000);
