// Auto-resume's successor (restart) replays the steps the execution it restarted had completed,
// but its step view answered `runs: [], replayed_from: null` for them (read as never run and not
// replayed), `svc status` said `replayed from the execution retried` (there was no retry) and
// nothing named the execution restarted. Now `replayed_from` and GET /api/executions/{id}'s
// `resumed_from` name it, and `svc status` and `svc logs` say so. The execution restarted named
// nothing of its successor either: its `resumed_as` (and `svc status`'s `resumed as`) names it.
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { runSvc, waitForOutput } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const SERVER_ENV = {
  SVC_COMMAND_REAPER_ENABLED: 'false',
  SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '8',
  SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1',
  SVC_AUTO_RESUME_MODE: 'restart',
  SVC_LOG_LEVEL: 'info',
};

let processes: ServerProcesses;
beforeAll(async () => {
  processes = await ServerProcesses.open(SERVER_ENV);
});
afterAll(async () => processes?.close());

it("auto-resume's successor names the execution it restarted as where its replayed steps ran", async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const hold = join(processes.dir, 'hold');
  await writeFile(hold, '');
  const s1 = (await processes.server({}, port)).proc;
  const api = executionApi(base);
  await api.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: two, path: resume/replayed-from }
workflow:
  - step: first
    tool: { name: count, kind: shell, command: 'echo counted' }
    next: second
  - step: second
    tool: { name: wait, kind: shell, env: { HOLD: "${hold}", STOP: "${processes.stopFile}" }, command: 'while [ -e "$HOLD" ] && [ ! -e "$STOP" ]; do sleep 0.1; done; echo done' }
`);
  const doomed = await processes.worker(base, 1);
  const id = await api.run('resume/replayed-from');
  const claimed = async () => (await processes.db.query(`SELECT step FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [id])).rows[0]?.step;
  await until('the second step to be claimed', async () => ((await claimed()) === 'second' ? true : undefined), 30_000);
  s1.kill('SIGKILL');
  await s1.exited;
  await doomed.kill();
  await new Promise((r) => setTimeout(r, 1_500));
  const server = (await processes.server({}, port)).proc;
  await unlink(hold);
  await processes.worker(base, 1);
  await waitForOutput(server, 'auto-resume handled', 60_000);
  const successor = Number((await processes.db.query(`SELECT execution_id FROM core.event WHERE event_id = 1 AND context->>'resumed_from' = $1`, [String(id)])).rows[0].execution_id);
  expect(await api.wait(successor, 60_000)).toMatchObject({ status: 'completed' });

  // Where the replayed step ran: the execution restarted, whose own view has that run.
  expect((await http(base, 'GET', `/api/executions/${successor}/steps/first`)).body).toMatchObject({ runs: [], replayed_from: id });
  expect((await http(base, 'GET', `/api/executions/${successor}/steps/second`)).body).toMatchObject({ runs: [expect.objectContaining({ status: 'completed' })], replayed_from: null });
  expect((await http(base, 'GET', `/api/executions/${id}/steps/first`)).body).toMatchObject({ runs: [expect.objectContaining({ status: 'completed' })], replayed_from: null });
  expect((await http(base, 'GET', `/api/executions/${successor}`)).body).toMatchObject({ retry_of: null, resumed_from: id });
  expect((await http(base, 'GET', `/api/executions/${id}`)).body).toMatchObject({ resumed_from: null, resumed_as: successor });
  expect((await http(base, 'GET', `/api/executions/${successor}`)).body).toMatchObject({ resumed_as: null });

  const env = { SVC_SERVER_URL: base };
  const status = await runSvc(['status', String(successor)], env);
  expect(status.stdout).toMatch(new RegExp(`resumed from +${id}\\b`));
  expect(status.stdout).toMatch(new RegExp(`\\nfirst +completed +replayed from ${id}; ok`));
  expect(status.stdout).not.toContain('the execution retried');
  expect((await runSvc(['status', String(id)], env)).stdout).toMatch(new RegExp(`resumed as +${successor}\\b`));
  const logs = await runSvc(['logs', String(successor)], env);
  expect(logs.stdout).toMatch(new RegExp(`execution\\.started .*resumed from ${id}`));
}, 180_000);
