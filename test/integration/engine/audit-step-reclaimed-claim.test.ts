// A step whose worker was SIGKILLed mid-task and whose command the reaper gave to another worker:
// GET /api/executions/{id}/steps/{step} answered one run, issued at the start and claimed when the
// second worker took it, with nothing saying it had been claimed before. The killed worker's claim
// (and the time it ran the task) reached the log with no report, so the seconds from the issue to
// the second claim read as a wait for a free worker (the console drew them grey, "waited to be
// claimed (a free worker, ...)"). The run now says which claim its times are of (`claim_attempt`).
// Real server, real `svc worker` processes (the first killed).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

const STALE_SECONDS = 3;
let t: TestApp;
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  // Above the 2 s busy heartbeat of the worker that stays (docs/operations.md, The command reaper).
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(STALE_SECONDS) });
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: reclaimed, path: audit/step-reclaimed }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: 'sleep 1' }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  for (const w of workers) await w.kill();
  await t?.close();
});

const commandRow = async (id: number) =>
  (await t.deps.db.query<{ status: string; attempt: number; claimed_at: Date | null }>('SELECT status, attempt, claimed_at FROM core.command WHERE execution_id = $1', [id])).rows[0];

it("a run claimed again after its worker was lost says which claim its times are of", async () => {
  const first = await startWorkerProcess(t.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: t.workerToken } });
  workers.push(first);
  const id: number = (await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/step-reclaimed' })).body.execution_id;
  const claimed = await until('its task is claimed', async () => {
    const row = await commandRow(id);
    return row?.status === 'CLAIMED' || row?.status === 'RUNNING' ? row : undefined;
  }, 20_000, 20);
  await first.kill();
  // While no report of the lost claim came, the run names that claim from the command row.
  const held = (await http(t.url, 'GET', `/api/executions/${id}/steps/start`)).body.runs[0];
  expect(held).toMatchObject({ status: 'claimed', claim_attempt: 1, claimed_at: claimed.claimed_at!.toISOString() });

  workers.push(await startWorkerProcess(t.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: t.workerToken } }));
  // Past the killed pool's heartbeat, a sweep hands its claim on.
  await new Promise((r) => setTimeout(r, (STALE_SECONDS + 1) * 1000));
  expect((await http(t.url, 'POST', '/api/admin/command_reaper/sweep', {})).status).toBe(200);
  await until('it completed', async () => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status === 'completed', 30_000, 50);

  const view = (await http(t.url, 'GET', `/api/executions/${id}/steps/start`)).body;
  expect(view.runs).toHaveLength(1);
  const run = view.runs[0];
  expect(run.status).toBe('completed');
  // Its times are of the second claim: what lies between the issue and it held the lost one.
  expect(run.claim_attempt, JSON.stringify(run)).toBe(2);
  expect(Date.parse(run.claimed_at)).toBeGreaterThan(claimed.claimed_at!.getTime() + STALE_SECONDS * 1000);
  expect((await commandRow(id)).attempt).toBe(2);
}, 90_000);
