// A command a worker was running when its execution was paused, whose worker then went silent
// (killed, cut off): once the reaper marked its claim stranded, another worker claimed it and ran
// the task again while the execution was still paused, by id or by the claim of the next command,
// though a pause issues no command (DESIGN.md "Waiting and control"; migrations/0047 withdraws the
// commands no worker holds). A stranded claim of a paused execution now waits for the resume, as
// a withdrawn command does (the reaper's sweep withdraws it: a claim by id is 409 command_paused); the resume gives it to the next claim.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { noopPlaybook } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;
let ex: ExecutionApi;
let db: pg.Client;
beforeAll(async () => {
  // A claim whose worker is silent for a second may be taken over (after a reaper sweep).
  a = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '1', SVC_COMMAND_REAPER_ENABLED: 'false' });
  ex = executionApi(a.url);
  await ex.register(noopPlaybook('audit/paused_stranded', 1));
  db = new pg.Client({ connectionString: a.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await a?.close();
});

const claimById = (commandId: number, worker: string) => http(a.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: worker }, asWorker);
const claimNext = (worker: string) => http(a.url, 'POST', '/api/worker/claim', { worker_id: worker, max: 8, wait_ms: 0 }, asWorker);

describe('a stranded claim of a paused execution', () => {
  it('is not claimed again while paused, by id or by the next claim; after the resume it is, once', async () => {
    const id = await ex.run('audit/paused_stranded');
    const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
    const commandId = Number(pending.rows[0].command_id);
    const old = await claimById(commandId, 'w-old');
    expect(old.status, JSON.stringify(old.body)).toBe(200);
    expect((await http(a.url, 'POST', '/api/events', { execution_id: id, command_id: commandId, attempt: old.body.attempt, worker_id: 'w-old', event_type: 'command.started' }, asWorker)).status).toBe(200);
    expect((await http(a.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
    // w-old goes silent; a sweep marks its claim stranded.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await http(a.url, 'POST', '/api/admin/command_reaper/sweep', {})).status).toBe(200);

    const byId = await claimById(commandId, 'w-new');
    expect(byId.status, JSON.stringify(byId.body)).toBe(409);
    // The sweep gave it back to the pause (withdrawn, as a command nobody claimed): the resume issues it.
    expect(byId.body.detail).toMatchObject({ code: 'command_paused' });
    const next = await claimNext('w-next');
    expect(next.status).toBe(200);
    expect(next.body.commands.filter((c: { execution_id: number }) => c.execution_id === id)).toEqual([]);
    expect((await db.query('SELECT attempt, worker_id FROM core.command WHERE command_id = $1', [commandId])).rows[0]).toMatchObject({ attempt: old.body.attempt, worker_id: 'w-old' });

    expect((await http(a.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    const taken = await claimNext('w-next');
    expect(taken.body.commands.map((c: { command_id: number }) => c.command_id)).toEqual([commandId]);
    const cmd = taken.body.commands[0];
    expect(cmd.attempt).toBe(old.body.attempt + 1);
    const done = await http(a.url, 'POST', '/api/events', { execution_id: id, command_id: commandId, attempt: cmd.attempt, worker_id: 'w-next', event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data: 'once' } } } }, asWorker);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'once' });
  });
});
