// Auto-resume's successor (restart) replays the steps the execution it restarted had completed,
// but its step view answered `runs: [], replayed_from: null` for them (read as never run and not
// replayed), `svc status` said `replayed from the execution retried` (there was no retry) and
// nothing named the execution restarted. Now `replayed_from` and GET /api/executions/{id}'s
// `resumed_from` name it, and `svc status` and `svc logs` say so. The execution restarted named
// nothing of its successor either: its `resumed_as` (and `svc status`'s `resumed as`) names it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { restartedByAutoResume } from '../../helpers/restarted-by-auto-resume.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';

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
  const { base, id, successor } = await restartedByAutoResume(processes, 'resume/replayed-from');

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
