// A signal sent while no step waited for it, kept for a step that says `buffer: true` (202
// buffered), was lost when the execution was succeeded: a retry of it (here: cancelled, retried
// from the step the cancel cut short) and auto-resume's restart of it (its server and worker
// SIGKILLed) started without it, and the step that was to take it waited for a signal its sender
// had been told was accepted. Both successors now keep what the old one kept, and the step takes it.
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { waitForOutput } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let processes: ServerProcesses;
beforeAll(async () => {
  // A dead worker's claim is judged stale after 8 s (auto-resume restarts only executions no live worker holds).
  processes = await ServerProcesses.open({ SVC_COMMAND_REAPER_ENABLED: 'false', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '8', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_LOG_LEVEL: 'info' });
});
afterEach(async () => processes.stopAll());
afterAll(async () => processes?.close());

/** `first` completes, `second` is held while HOLD exists, `take` takes a kept `go`. */
const playbook = (path: string, hold: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: kept, path: ${path} }
workflow:
  - step: first
    tool: { name: count, kind: shell, command: 'echo counted' }
    next: second
  - step: second
    tool: { name: wait, kind: shell, env: { HOLD: "${hold}", STOP: "${processes.stopFile}" }, command: 'while [ -e "$HOLD" ] && [ ! -e "$STOP" ]; do sleep 0.1; done; echo done' }
    next: take
  - step: take
    wait: { signal: go, buffer: true, timeout: 60s }
`;

const keptSignals = async (base: string, id: number) => (await http(base, 'GET', `/api/executions/${id}/state`)).body.kept_signals as Json[];
const claimed = async (id: number) => (await processes.db.query(`SELECT step FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [id])).rows[0]?.step as string | undefined;

/** Registers the playbook, starts it, and sends `go` (kept) once `second` runs. */
async function keptWhileSecondRuns(base: string, path: string, hold: string): Promise<number> {
  const api = executionApi(base);
  await api.register(playbook(path, hold));
  const id = await api.run(path);
  await until('the second step to be claimed', async () => ((await claimed(id)) === 'second' ? true : undefined), 30_000);
  const sent = await http(base, 'POST', `/api/executions/${id}/signals/go`, { payload: { approved: 'yes' } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  expect(sent.body).toMatchObject({ status: 'buffered', step: 'take' });
  return id;
}

describe('signals kept for a step that had not taken them', () => {
  it('are kept by a retry of the execution', async () => {
    const hold = join(processes.dir, 'retry-hold');
    await writeFile(hold, '');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await processes.server({}, port);
    await processes.worker(base, 1);
    const id = await keptWhileSecondRuns(base, 'kept_successor/retry', hold);
    expect((await http(base, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
    await executionApi(base).wait(id, 30_000);
    await unlink(hold);

    const retried = await http(base, 'POST', `/api/executions/${id}/retry`, {});
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ from_step: 'second', replayed: ['first'] });
    const retry = retried.body.execution_id as number;
    expect(await executionApi(base).wait(retry, 30_000)).toMatchObject({ status: 'completed', result: { approved: 'yes' } });
    expect(await keptSignals(base, retry)).toEqual([]);
  });

  it('are kept by auto-resume\'s restart of the execution', async () => {
    const hold = join(processes.dir, 'resume-hold');
    await writeFile(hold, '');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const first = (await processes.server({ SVC_AUTO_RESUME_MODE: 'restart' }, port)).proc;
    const doomed = await processes.worker(base, 1);
    const id = await keptWhileSecondRuns(base, 'kept_successor/resume', hold);
    first.kill('SIGKILL');
    await first.exited;
    await doomed.kill();
    await new Promise((r) => setTimeout(r, 1_500));
    const server = (await processes.server({ SVC_AUTO_RESUME_MODE: 'restart' }, port)).proc;
    await unlink(hold);
    await processes.worker(base, 1);
    await waitForOutput(server, 'auto-resume handled', 60_000);
    const successor = Number((await processes.db.query(`SELECT execution_id FROM core.event WHERE event_id = 1 AND context->>'resumed_from' = $1`, [String(id)])).rows[0].execution_id);
    expect(await executionApi(base).wait(successor, 30_000)).toMatchObject({ status: 'completed', result: { approved: 'yes' } });
    expect(await keptSignals(base, successor)).toEqual([]);
  }, 120_000);
});
