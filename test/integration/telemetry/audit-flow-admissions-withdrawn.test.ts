// A limited command whose worker was SIGKILLed while its execution was paused is withdrawn to the
// pause by the reaper (its key's slot freed), and after the resume it is claimed from PENDING
// again at attempt 2, taking a slot (and a token) afresh. The claim's metrics read attempt > 1 as
// a take-over that kept its slot: svc_flow_admissions_total{kind=command} missed that claim (and
// the admitter was not told a bucket was drawn on). The claim statement now says which claims
// took room. A plain pause of an unclaimed command (PENDING → PAUSED → PENDING) counts once.
// Real server, real worker processes.
import { chmod, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { metricSum, scrape } from '../../helpers/metrics-text.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

const STALE_SECONDS = 3;
const WITHDRAWN = 'admit-withdrawn';
const PAUSED = 'admit-paused-unclaimed';
let t: TestApp;
let api: ExecutionApi;
let dir: string;
const workers: WorkerProcess[] = [];

const playbook = (path: string, limit: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: ${path} }
workflow:
  - step: start
    tool:
      - name: wait
        kind: shell
        limit: { name: ${limit} }
        env: { HOLD: "${join(dir, 'hold')}" }
        command: 'while [ -e "$HOLD" ]; do sleep 0.1; done; echo done'
`;

beforeAll(async () => {
  // No timer: the test's nudge is the only sweep.
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(STALE_SECONDS), SVC_COMMAND_REAPER_ENABLED: 'false' });
  api = executionApi(t.url);
  dir = await mkdtemp(join(tmpdir(), 'svc-admit-withdrawn-'));
  // A sandboxed task runs as a user of its own, which must be able to enter the directory.
  await chmod(dir, 0o755);
  for (const limit of [WITHDRAWN, PAUSED]) expect((await http(t.url, 'PUT', `/api/limits/${limit}`, { concurrency: 1 })).status).toBe(200);
  await api.register(playbook('audit/admit-withdrawn', WITHDRAWN));
  await api.register(playbook('audit/admit-paused', PAUSED));
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
const commandOf = async (id: number) => (await t.deps.db.query<{ status: string; attempt: number }>('SELECT status, attempt FROM core.command WHERE execution_id = $1', [id])).rows[0];
async function flow(limit: string): Promise<{ queued: number; admitted: number; waits: number }> {
  const s = await scrape(t.url);
  const labels = { limit, kind: 'command' };
  return { queued: metricSum(s, 'svc_flow_queued_total', labels), admitted: metricSum(s, 'svc_flow_admissions_total', labels), waits: metricSum(s, 'svc_flow_wait_seconds_count', labels) };
}

it('a plain pause of an unclaimed limited command counts one admission', async () => {
  // No worker yet: the command waits unclaimed while it is paused and resumed.
  const id = await api.run('audit/admit-paused');
  await until('its command issued', async () => (await commandOf(id))?.status === 'PENDING');
  expect((await http(t.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
  expect((await commandOf(id)).status).toBe('PAUSED');
  expect((await http(t.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
  await worker();
  expect(await api.wait(id, 30_000)).toMatchObject({ status: 'completed' });
  expect(await commandOf(id)).toEqual({ status: 'COMPLETED', attempt: 1 });
  expect(await flow(PAUSED)).toEqual({ queued: 1, admitted: 1, waits: 1 });
}, 60_000);

it('a limited claim withdrawn to a pause and claimed again after the resume counts as admitted again', async () => {
  const hold = join(dir, 'hold');
  await writeFile(hold, '');
  // The first test's worker is idle; this one's claim is the one SIGKILLed.
  for (const w of workers.splice(0)) await w.kill();
  const doomed = await worker();
  const id = await api.run('audit/admit-withdrawn');
  await until('its command claimed', async () => ['CLAIMED', 'RUNNING'].includes((await commandOf(id))?.status ?? ''), 30_000, 50);
  expect(await flow(WITHDRAWN)).toEqual({ queued: 1, admitted: 1, waits: 1 });
  expect((await http(t.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
  await doomed.kill();
  await new Promise((r) => setTimeout(r, (STALE_SECONDS + 1) * 1000));
  expect((await http(t.url, 'POST', '/api/admin/command_reaper/sweep', {})).body).toMatchObject({ withdrawn: 1 });
  expect((await http(t.url, 'GET', `/api/limits/${WITHDRAWN}`)).body.running).toBe(0);

  // The resume gives it back to the claims: the live worker's claim takes the key's slot again.
  await worker();
  await unlink(hold);
  expect((await http(t.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
  expect(await api.wait(id, 30_000)).toMatchObject({ status: 'completed' });
  expect(await commandOf(id)).toEqual({ status: 'COMPLETED', attempt: 2 });
  // Two claims took the slot; its wait is observed at its first claim only (from its issue).
  expect(await flow(WITHDRAWN)).toEqual({ queued: 1, admitted: 2, waits: 1 });
}, 90_000);
