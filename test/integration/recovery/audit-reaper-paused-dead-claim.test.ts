// A worker SIGKILLed while it ran a command of an execution that is then paused: no worker may
// take that claim over while the execution is paused (a pause issues no command), yet every sweep
// counted and logged it as republished (svc_command_reaper_republished_total grew by one a sweep
// for as long as the pause lasted), and the dead claim kept its task limit's slot for the whole
// pause, so the other executions on that limit waited for someone else's resume. The sweep now
// gives such a claim back to the pause (status PAUSED, its slot freed), once; the resume issues it.
// Real server, real worker processes.
import { chmod, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

const STALE_SECONDS = 3;
const LIMIT = 'paused-dead-solo';
let t: TestApp;
let api: ExecutionApi;
let dir: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  // No timer: the test's nudges are the only sweeps.
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(STALE_SECONDS), SVC_COMMAND_REAPER_ENABLED: 'false' });
  api = executionApi(t.url);
  dir = await mkdtemp(join(tmpdir(), 'svc-paused-dead-'));
  // A sandboxed task runs as a user of its own, which must be able to enter the directory.
  await chmod(dir, 0o755);
  expect((await http(t.url, 'PUT', `/api/limits/${LIMIT}`, { concurrency: 1 })).status).toBe(200);
  // Its one task waits while the file HOLD exists, on a limit of one.
  await api.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: audit/paused-dead }
workflow:
  - step: start
    tool:
      - name: wait
        kind: shell
        limit: { name: ${LIMIT} }
        env: { HOLD: "${join(dir, 'hold')}" }
        command: 'while [ -e "$HOLD" ]; do sleep 0.1; done; echo done'
`);
}, 60_000);
afterAll(async () => {
  for (const w of workers) await w.kill().catch(() => {});
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const worker = async (): Promise<WorkerProcess> => {
  const w = await startWorkerProcess(t.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: t.workerToken, SVC_SHELL_SANDBOX_BINDS: dir } });
  workers.push(w);
  return w;
};
const sweep = async (): Promise<Json> => {
  const r = await http(t.url, 'POST', '/api/admin/command_reaper/sweep', {});
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const commandOf = async (id: number) =>
  (await t.deps.db.query<{ command_id: number; status: string; attempt: number; worker_id: string | null }>('SELECT command_id, status, attempt, worker_id FROM core.command WHERE execution_id = $1', [id])).rows;
async function republishedMetric(): Promise<number> {
  const text = (await http(t.url, 'GET', '/metrics')).body as string;
  return [...text.matchAll(/^svc_command_reaper_republished_total\{reason="[a-z_]+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

it("a paused execution's dead claim is given back to the pause once, frees its limit slot, and runs once after the resume", async () => {
  const hold = join(dir, 'hold');
  await writeFile(hold, '');
  const doomed = await worker();
  const paused = await api.run('audit/paused-dead');
  await until('its command claimed', async () => ['CLAIMED', 'RUNNING'].includes((await commandOf(paused))[0]?.status ?? ''), 30_000, 50);
  // Another execution waits on the limit the claim holds.
  const other = await api.run('audit/paused-dead');
  expect((await http(t.url, 'POST', `/api/executions/${paused}/pause`, { reason: 'looking into it' })).status).toBe(200);
  await doomed.kill();
  await new Promise((r) => setTimeout(r, (STALE_SECONDS + 1) * 1000));

  // The first sweep gives the claim back to the pause; the next finds nothing to do.
  expect(await sweep()).toMatchObject({ republished: 0, withdrawn: 1 });
  expect(await sweep()).toMatchObject({ republished: 0, withdrawn: 0 });
  expect(await sweep()).toMatchObject({ republished: 0, withdrawn: 0 });
  expect(await republishedMetric()).toBe(0);
  const [withdrawn] = await commandOf(paused);
  expect(withdrawn).toMatchObject({ status: 'PAUSED', attempt: 1 });
  // Its slot is free: the other execution on the limit runs during the pause.
  expect((await http(t.url, 'GET', `/api/limits/${LIMIT}`)).body.running).toBe(0);
  const live = await worker();
  await unlink(hold);
  expect(await api.wait(other, 30_000)).toMatchObject({ status: 'completed' });
  expect((await http(t.url, 'GET', `/api/executions/${paused}`)).body.status).toBe('paused');
  expect((await commandOf(paused))[0].status).toBe('PAUSED');

  // The resume issues it: the live worker claims it (attempt 2) with no sweep, and it runs once.
  expect((await http(t.url, 'POST', `/api/executions/${paused}/resume`, {})).status).toBe(200);
  expect(await api.wait(paused, 30_000)).toMatchObject({ status: 'completed', result: { stdout: 'done\n' } });
  expect(await commandOf(paused)).toEqual([{ command_id: withdrawn.command_id, status: 'COMPLETED', attempt: 2, worker_id: live.name }]);
  expect((await api.events(paused)).filter((e) => e.event_type === 'command.completed').map((e) => e.worker_id)).toEqual([live.name]);
  expect(await sweep()).toMatchObject({ republished: 0, withdrawn: 0 });
  expect(await republishedMetric()).toBe(0);
}, 120_000);
