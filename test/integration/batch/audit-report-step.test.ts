import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

// A report about a command names its step too (a batch item's `step`). The server issued the
// command for one step, and the report was recorded under the step it named: a batch whose items
// said `s9` for s1's command moved the execution on (s1 done, s2 issued), while the log held
// command.started/completed of a step `s9` and GET …/steps/s1 showed s1's run claimed, never
// started or finished, with no tasks. A report about a command is recorded under its command's step.

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '10' });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(noopPlaybook('batch/report-step', 2));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function claimed(): Promise<{ id: number; cmd: Json }> {
  const id = await ex.run('batch/report-step');
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
  return { id, cmd: await b.claim(Number(pending.rows[0].command_id), 'w1') };
}

it("records a report about a command under the command's step, whatever step it names", async () => {
  const { id, cmd } = await claimed();
  const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport({ ...cmd, step: 's9' }) });
  expect(r.status).toBe(202);
  expect((await b.settled(r.body.request_id)).state).toBe('completed');
  const reported = (await ex.events(id)).filter((e: Json) => e.command_id === cmd.command_id);
  expect(reported.map((e: Json) => e.event_type)).toEqual(expect.arrayContaining(['command.started', 'call.done', 'command.completed']));
  expect([...new Set(reported.map((e: Json) => e.step))]).toEqual(['s1']);
  const run = await http(t.url, 'GET', `/api/executions/${id}/steps/s1`);
  expect(run.status).toBe(200);
  expect(run.body.runs).toHaveLength(1);
  expect(run.body.runs[0]).toMatchObject({ command_id: cmd.command_id, status: 'completed' });
  expect(run.body.runs[0].started_at).not.toBeNull();
  expect(run.body.runs[0].finished_at).not.toBeNull();
  expect(run.body.runs[0].tasks.map((x: Json) => x.task ?? x.name)).toEqual(['t']);
});

it("records a refused or late report about a command under the command's step too", async () => {
  const { id, cmd } = await claimed();
  await b.settled((await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) })).body.request_id);
  // A superseded attempt's report (refused) and the same claim's report again (late), naming another step.
  const r = await b.post({ execution_id: id, worker_id: 'w1', events: [...commandReport({ ...cmd, step: 's9', attempt: cmd.attempt - 1 }), ...commandReport({ ...cmd, step: 's9' })] });
  expect((await b.settled(r.body.request_id)).state).toBe('completed');
  const at = new Set(r.body.event_ids as number[]);
  const items = (await ex.events(id)).filter((e: Json) => at.has(e.event_id));
  expect(items.map((e: Json) => e.event_type)).toEqual(['command.refused', 'command.refused', 'command.refused', 'command.started', 'call.done', 'command.completed']);
  expect([...new Set(items.map((e: Json) => e.step))]).toEqual(['s1']);
});
