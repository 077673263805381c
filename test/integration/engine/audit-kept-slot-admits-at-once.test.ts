// A cancelled execution whose command a worker still ran kept its concurrency slot until the
// worker's report (migrations/0055), as it should; but that report, which gives the slot back,
// did not wake the admitter: the next queued execution was admitted at its next look, 82 to 622 ms
// after the report (up to its second), though docs/flow-control.md says it looks sooner when
// this server freed a slot, as an admitted execution's end makes it. Real server, real worker
// process; the command is a shell task of no limit (the execution's slot is what it keeps).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: WorkerStack;
beforeAll(async () => {
  t = await startWorkerStack({ workers: 1, concurrency: 4 });
  expect((await http(t.url, 'PUT', '/api/limits/kept-one', { concurrency: 1 })).status).toBe(200);
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: kept, path: audit/kept-slot }
concurrency: { limit: kept-one }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: 'sleep 30' }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const eventsOf = async (id: number): Promise<Json[]> => (await http(t.url, 'GET', `/api/events/${id}?limit=100`)).body.events;
const start = async (): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/kept-slot' })).body.execution_id;

it("the worker's report that gives a cancelled execution's kept slot back admits the next queued one at once", async () => {
  const delays: number[] = [];
  for (let round = 0; round < 6; round++) {
    const first = await start();
    // Claimed by the worker (its claim and start are reported with its end).
    await until('its task is claimed', async () => (await t.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [first])).rows[0]?.status === 'CLAIMED', 20_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    const next = await start();
    expect((await http(t.url, 'GET', `/api/executions/${next}`)).body.status).toBe('queued');
    expect((await http(t.url, 'POST', `/api/executions/${first}/cancel`, { reason: 'round' })).status).toBe(200);
    // The worker hears of the cancel at its heartbeat, stops the task and reports it: the slot comes free then.
    const admitted = await until('the next admitted', async () => (await eventsOf(next)).find((e) => e.event_type === 'execution.admitted'), 20_000, 50);
    const report = (await eventsOf(first)).filter((e) => e.event_type === 'command.failed').pop();
    expect(report?.error?.code, 'the late report of the cancelled task').toBe('cancelled');
    delays.push(Date.parse(admitted.context.at) - Date.parse(report.created_at));
    expect((await http(t.url, 'POST', `/api/executions/${next}/cancel`, { reason: 'round over' })).status).toBe(200);
    await until('the slot is free again', async () => (await http(t.url, 'GET', '/api/limits/kept-one')).body.running === 0, 20_000, 50);
  }
  // Before: the admitter's next look, anywhere in its second.
  expect(Math.max(...delays), `ms from the report to the admission: ${delays.join(', ')}`).toBeLessThan(400);
}, 180_000);
