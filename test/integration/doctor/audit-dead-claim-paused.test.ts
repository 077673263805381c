// svc doctor detect on a command whose worker was SIGKILLed while its execution is paused: the
// check said what it says of any dead claim, with `svc doctor repair ... # the reaper republishes
// them and a live worker claims them again` as the next step. No worker takes a paused
// execution's claim over (docs/operations.md, Pause and resume), so the repair "republished 1"
// and the next detect found the same claim, again and again. It now says the execution is paused
// and that a resume lets a worker take the command over; the repair gives the claim back to the
// pause (withdrawn), after which detect finds nothing. Real server and worker processes.
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { heldPlaybook, ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';
import { runDoctor } from './run-doctor.ts';

const STALE = '2';
let processes: ServerProcesses;
beforeAll(async () => {
  // The timer off: what recovers the command here is the operator's resume and repair.
  processes = await ServerProcesses.open({ SVC_COMMAND_REAPER_ENABLED: 'false', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: STALE });
});
afterAll(async () => processes?.close());

it('says the dead claim is a paused execution\'s and that a resume lets a worker take it over', async () => {
  const { base } = await processes.server();
  const api = executionApi(base);
  const hold = join(processes.dir, 'hold');
  await writeFile(hold, '');
  await api.register(heldPlaybook('audit/paused-held', hold, processes.stopFile));
  const doomed = await processes.worker(base, 1);
  const id = await api.run('audit/paused-held');
  await until('its command claimed', async () => (await processes.db.query(`SELECT 1 FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [id])).rowCount === 1, 30_000);
  await doomed.kill();
  expect((await http(base, 'POST', `/api/executions/${id}/pause`, { reason: 'looking into it' })).status).toBe(200);
  // A live worker that runs the detection playbooks.
  await processes.worker(base, 2, { SVC_ALLOW_SERVICE_DB_TASKS: 'read_only', SVC_DATABASE_URL: processes.database.url });
  await new Promise((r) => setTimeout(r, (Number(STALE) + 1) * 1000));

  const detect = async () => {
    const run = await runDoctor(['detect', '--server', base, '--json', '--worker-stale-seconds', STALE]);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    return run.json().data as Json;
  };
  const found = (await detect()).checks.dead_worker_claims;
  expect(found.items).toMatchObject([{ execution_id: id, paused: true }]);
  expect(found.summary).toContain('(its execution is paused: no worker takes it over until resumed)');
  expect(found.next_steps[0]).toMatch(/^svc doctor repair --server \S+ +# the reaper gives a paused execution's dead claim back to the pause/);
  expect(found.next_steps[1]).toMatch(new RegExp(`^svc resume ${id} --server `));
  const text = await runDoctor(['detect', '--server', base, '--text', '--worker-stale-seconds', STALE]);
  expect(text.stdout).toContain(`its execution is paused: taken over once resumed`);

  // As it says: the repair gives the claim back to the pause (republishing nothing no worker may
  // take), and the doctor and the reaper then agree nothing is held by a dead worker.
  expect((await runDoctor(['repair', '--server', base, '--json'])).json()).toMatchObject({ data: { result: 'swept', republished: 0, withdrawn: 1 } });
  expect((await runDoctor(['repair', '--server', base, '--json'])).json()).toMatchObject({ data: { result: 'swept', republished: 0, withdrawn: 0 } });
  const after = await runDoctor(['detect', '--server', base, '--json', '--worker-stale-seconds', STALE]);
  expect((after.json().data as Json).checks.dead_worker_claims.count, after.stdout).toBe(0);
  // Resumed, a live worker runs the command, with no repair.
  expect((await http(base, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
  await unlink(hold);
  expect(await api.wait(id, 30_000)).toMatchObject({ status: 'completed' });
}, 180_000);
