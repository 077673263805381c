// An operator's repair after a worker died holding a command, as docs/operations.md tells it:
// `svc doctor repair`, then again. The first republishes the dead worker's claim and a live worker
// (a real `svc worker` process) runs it once; the second finds nothing to republish; the task's
// HTTP call (a real server on port 0, counting) was made once in all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';
import { runDoctor } from './run-doctor.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: call, path: audit/call }
workflow:
  - step: start
    tool: { name: t, kind: http, method: GET, url: "{{ workload.target }}/echo?e={{ execution.id }}" }
`;

let t: TestApp;
let target: HttpTarget;
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  target = await startHttpTarget();
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2' });
}, 60_000);
afterAll(async () => {
  await worker?.stop().catch(() => worker?.kill());
  await t?.close();
  await target?.close();
});

describe('svc doctor repair, twice', () => {
  it('the first republishes the dead claim and it runs once; the second finds nothing', async () => {
    const api = executionApi(t.url);
    await api.register(PLAYBOOK);
    expect((await http(t.url, 'POST', '/api/worker/pool/register', { name: 'ghost', capacity: 1 }, asWorker)).status).toBe(200);
    const id = await api.run('audit/call', { target: target.url });
    await until('the ghost to claim the command', async () => {
      const r = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'ghost', max: 1, wait_ms: 1000 }, asWorker);
      return r.body.commands?.length ? true : undefined;
    });
    worker = await startWorkerProcess(t.url, { concurrency: 2 });
    // The ghost says nothing more: its claim is stranded once its pool is silent for 2 s.
    const first = await until(
      'a repair to republish the ghost claim',
      async () => {
        const run = await runDoctor(['repair', '--server', t.url, '--json']);
        expect(run.code, run.stdout + run.stderr).toBe(0);
        return run.json().data.republished >= 1 ? run.json() : undefined;
      },
      60_000,
      500,
    );
    expect(first).toMatchObject({ severity: 'ok', data: { result: 'swept', republished: 1 } });
    expect(await api.wait(id, 60_000)).toMatchObject({ status: 'completed' });
    const second = await runDoctor(['repair', '--server', t.url, '--json']);
    expect(second.code).toBe(0);
    expect(second.json()).toMatchObject({ severity: 'ok', data: { result: 'swept', republished: 0 } });
    expect(target.requests.filter((r) => r.path === '/echo' && r.query.e === String(id))).toHaveLength(1);
  });
});
