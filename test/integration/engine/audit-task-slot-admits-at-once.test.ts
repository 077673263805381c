// One limit may hold a playbook's executions (its `concurrency`) and another playbook's tasks
// (their `limit`) on one key (docs/flow-control.md, "How it is enforced"). An admitted
// execution's end wakes the task's claimers (audit-shared-limit-wake); the other way round, a
// task's command that ended gave its slot back without waking the admitter: the execution queued
// on the key was admitted at the admitter's next look, 201 to 602 ms after the command's report
// (up to its second). Real server, real worker process.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: WorkerStack;
const register = async (content: string) => {
  const r = await http(t.url, 'POST', '/api/catalog/playbook', { content });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
};
beforeAll(async () => {
  t = await startWorkerStack({ workers: 1, concurrency: 4 });
  expect((await http(t.url, 'PUT', '/api/limits/shared-one', { concurrency: 1 })).status).toBe(200);
  await register(`apiVersion: svc/v1
metadata: { name: runs, path: audit/shared-runs }
concurrency: { limit: shared-one }
workflow:
  - step: start
    tool: { name: hi, kind: shell, command: 'echo hi' }
`);
  await register(`apiVersion: svc/v1
metadata: { name: calls, path: audit/shared-calls }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: 'sleep 1', limit: { name: shared-one } }
`);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const eventsOf = async (id: number): Promise<Json[]> => (await http(t.url, 'GET', `/api/events/${id}?limit=100`)).body.events;
const start = async (path: string): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path })).body.execution_id;

it("a task's command that ends gives its slot to the execution queued on the key at once", async () => {
  const delays: number[] = [];
  for (let round = 0; round < 6; round++) {
    const call = await start('audit/shared-calls');
    await until('its command holds the slot', async () => (await t.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [call])).rows[0]?.status === 'CLAIMED', 20_000, 20);
    const run = await start('audit/shared-runs');
    expect((await http(t.url, 'GET', `/api/executions/${run}`)).body.status).toBe('queued');
    const admitted = await until('the execution admitted', async () => (await eventsOf(run)).find((e) => e.event_type === 'execution.admitted'), 20_000, 50);
    const report = (await eventsOf(call)).find((e) => e.event_type === 'command.completed');
    expect(report, 'the call completed').toBeDefined();
    delays.push(Date.parse(admitted.context.at) - Date.parse(report.created_at));
    await until('both completed', async () => (await http(t.url, 'GET', `/api/executions/${run}`)).body.status === 'completed', 20_000, 50);
  }
  // Before: the admitter's next look, anywhere in its second.
  expect(Math.max(...delays), `ms from the report to the admission: ${delays.join(', ')}`).toBeLessThan(400);
}, 180_000);
