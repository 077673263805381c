// `svc doctor repair` after an operator cancelled an execution whose worker was SIGKILLed while it
// ran a task: the cancelled command keeps its concurrency slot until that worker's lease expires,
// and the sweep the repair asks for gives it back, admitting the execution queued on the limit.
// The repair said "the reaper scanned 0 commands and none needed republishing": nothing done, as
// far as the operator could tell, while the queued execution started. Real server, real worker
// process (killed), the doctor as a real process.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess } from '../../helpers/worker-process.ts';
import { runDoctor } from './run-doctor.ts';

const STALE_SECONDS = 2;
let t: TestApp;
beforeAll(async () => {
  // The timer off: the repair's sweep is the one that finds the slot.
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(STALE_SECONDS), SVC_COMMAND_REAPER_ENABLED: 'false' });
  expect((await http(t.url, 'PUT', '/api/limits/repair-one', { concurrency: 1 })).status).toBe(200);
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: held, path: audit/repair-slot }
concurrency: { limit: repair-one }
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

const start = async (): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/repair-slot' })).body.execution_id;
const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;

it('says it gave back the limit slot a dead worker\'s cancelled command kept, and the queued execution goes on', async () => {
  const worker = await startWorkerProcess(t.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: t.workerToken } });
  const first = await start();
  await until('its task is claimed', async () => (await t.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = $1', [first])).rows[0]?.status === 'CLAIMED', 20_000, 50);
  await worker.kill();
  expect((await http(t.url, 'POST', `/api/executions/${first}/cancel`, { reason: 'stuck' })).status).toBe(200);
  const next = await start();
  expect(await statusOf(next)).toBe('queued');
  await new Promise((r) => setTimeout(r, (STALE_SECONDS + 1) * 1000));

  const run = await runDoctor(['repair', '--server', t.url, '--json']);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const o = run.json();
  expect(o).toMatchObject({ severity: 'ok', data: { result: 'swept', republished: 0, released: 1 } });
  expect(o.data.summary).toContain('gave back 1 limit slot');
  await until('the queued execution admitted', async () => (await statusOf(next)) === 'running', 20_000, 100);

  // Nothing left to give back: the answer says 0, and the summary says nothing of slots.
  const again = await runDoctor(['repair', '--server', t.url, '--json']);
  expect(again.json()).toMatchObject({ data: { result: 'swept', released: 0 } });
  expect(again.json().data.summary).not.toContain('slot');
  expect((await http(t.url, 'POST', `/api/executions/${next}/cancel`, { reason: 'done' })).status).toBe(200);
}, 120_000);
