import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

// Reports that come after their command or their execution ended, by batch and by
// POST /api/worker/report: the log keeps them, the machine folds none of them, and the step's runs
// (GET /api/executions/{id}/steps/{step}) read them as the machine does. A cancel is an operator's
// (POST …/cancel): a worker's batch cannot write one.

const ONE_STEP = noopPlaybook('batch/late-one', 1);

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.05' });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(ONE_STEP);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

/** A one-step execution run to completion by worker w1 through a batch; its command as claimed. */
async function completedExecution(): Promise<{ id: number; cmd: Json }> {
  const id = await ex.run('batch/late-one');
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
  const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
  await b.settled((await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd, 'first') })).body.request_id);
  expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'first' });
  return { id, cmd };
}

const stepRuns = async (id: number) => {
  const r = await http(t.url, 'GET', `/api/executions/${id}/steps/s1`);
  expect(r.status).toBe(200);
  return r.body.runs as Json[];
};
const executionRow = async (id: number) => (await db.query(`SELECT status, result, error, finished_at, snapshot FROM core.execution WHERE execution_id = $1`, [id])).rows[0];

describe('late reports', () => {
  it('a command.failed batched after the execution completed is kept in the log and leaves the step run completed', async () => {
    const { id, cmd } = await completedExecution();
    const before = await stepRuns(id);
    expect(before).toEqual([expect.objectContaining({ command_id: cmd.command_id, status: 'completed' })]);
    const row = await executionRow(id);
    const late = await b.post({ execution_id: id, worker_id: 'w1', events: [{ event_type: 'command.failed', command_id: cmd.command_id, error: { message: 'late' } }] });
    expect(late.status).toBe(202);
    await b.settled(late.body.request_id);
    expect(await stepRuns(id)).toEqual(before);
    expect(await executionRow(id)).toEqual(row);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'first' });
    const stored = (await ex.events(id)).filter((e) => e.event_type === 'command.failed');
    expect(stored).toHaveLength(1);
    expect(stored[0].context).toMatchObject({ late: true });
  });

  it('a late command.failed by POST /api/worker/report is stored and read as the batch one is', async () => {
    const { id, cmd } = await completedExecution();
    const before = await stepRuns(id);
    const r = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'w1', events: [{ execution_id: id, event_type: 'command.failed', command_id: cmd.command_id, error: { message: 'late' } }] }, asWorker);
    expect(r.status).toBe(200);
    expect(await stepRuns(id)).toEqual(before);
    const stored = (await ex.events(id)).filter((e) => e.event_type === 'command.failed');
    expect(stored).toHaveLength(1);
    expect(stored[0].context).toMatchObject({ late: true });
  });

  it('a report from a superseded attempt is recorded as command.refused, never as a second command.completed', async () => {
    const { id, cmd } = await completedExecution();
    const before = await stepRuns(id);
    const stale = await b.post({ execution_id: id, worker_id: 'w0', events: [{ event_type: 'command.completed', command_id: cmd.command_id, attempt: cmd.attempt - 1, result: { tasks: { t: { status: 'ok', data: 'stale' } } } }] });
    await b.settled(stale.body.request_id);
    const events = await ex.events(id);
    expect(events.filter((e) => e.event_type === 'command.completed')).toHaveLength(1);
    expect(events.find((e) => e.event_type === 'command.refused' && e.context?.reported === 'command.completed')?.context).toMatchObject({ refused: 'stale_claim' });
    expect(await stepRuns(id)).toEqual(before);
  });

  it('a report naming only a worker other than the one that finished the command is refused, never a second command.completed', async () => {
    // w0's claim was taken over by w1, which completed it; w0 reports by worker_id alone. While
    // the command ran this was refused (not_holder); it was then stored as a late completion.
    const { id, cmd } = await completedExecution();
    const before = await stepRuns(id);
    const completed = { event_type: 'command.completed', command_id: cmd.command_id, result: { tasks: { t: { status: 'ok', data: 'stale' } } } };
    const batched = await b.post({ execution_id: id, worker_id: 'w0', events: [completed] });
    expect(batched.status).toBe(202);
    await b.settled(batched.body.request_id);
    const one = await http(t.url, 'POST', '/api/events', { ...completed, execution_id: id, worker_id: 'w0' }, asWorker);
    expect(one.status).toBe(409);
    expect(one.body.detail).toMatchObject({ code: 'not_holder' });
    const events = await ex.events(id);
    expect(events.filter((e) => e.event_type === 'command.completed').map((e) => e.worker_id)).toEqual(['w1']);
    const [reserved] = batched.body.event_ids as number[];
    expect(events.find((e) => e.event_id === reserved)).toMatchObject({ event_type: 'command.refused', worker_id: 'w0', context: { refused: 'not_holder', reported: 'command.completed' } });
    // POST /api/events records it too, as it records a refused attempt number.
    expect(events.filter((e) => e.event_type === 'command.refused' && e.context?.refused === 'not_holder')).toHaveLength(2);
    expect(await stepRuns(id)).toEqual(before);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'first' });
  });

  it('a worker report stored after the execution ended (terminal fast path) does not move its run', async () => {
    const { id, cmd } = await completedExecution();
    const before = await stepRuns(id);
    // A report the command machine accepts (the command taken back to RUNNING by hand) on an execution already completed.
    await db.query(`UPDATE core.command SET status = 'RUNNING' WHERE command_id = $1`, [cmd.command_id]);
    const late = await b.post({ execution_id: id, worker_id: 'w1', events: [{ event_type: 'command.failed', command_id: cmd.command_id, attempt: cmd.attempt, error: { message: 'after the end' } }] });
    await b.settled(late.body.request_id);
    const stored = (await ex.events(id)).filter((e) => e.event_type === 'command.failed');
    expect(stored).toHaveLength(1);
    expect(stored[0].status).toBe('completed');
    expect(await stepRuns(id)).toEqual(before);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'first' });
  });

  it('refuses execution.cancelled in a batch with 422 naming the type, storing nothing: a cancel is POST …/cancel', async () => {
    const { id } = await completedExecution();
    const count = async () => Number((await db.query(`SELECT count(*) AS n FROM core.event WHERE execution_id = $1`, [id])).rows[0].n);
    const n = await count();
    const r = await b.post({ execution_id: id, worker_id: 'w1', events: [{ event_type: 'execution.cancelled', context: { reason: 'via batch' } }] });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('execution.cancelled');
    expect(await count()).toBe(n);
    const events = await ex.events(id);
    expect(events.filter((e) => ['playbook.completed', 'playbook.failed', 'execution.cancelled'].includes(e.event_type)).map((e) => e.event_type)).toEqual(['playbook.completed']);
    // Nor by the synchronous intakes, which read the same registry.
    const one = await http(t.url, 'POST', '/api/events', { execution_id: id, event_type: 'execution.cancelled', context: { reason: 'via events' } }, asWorker);
    expect(one.status).toBe(422);
    const report = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'w1', events: [{ execution_id: id, event_type: 'execution.cancelled', context: { reason: 'via report' } }] }, asWorker);
    expect(report.status).toBe(422);
    expect(await count()).toBe(n);
  });

  it('a cancel by POST …/cancel carries reason, cancelled_at and requested_by', async () => {
    const id = await ex.run('batch/late-one');
    const r = await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'stop' });
    expect(r.status).toBe(200);
    const cancelled = (await ex.events(id)).filter((e) => e.event_type === 'execution.cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0].context).toMatchObject({ reason: 'stop', cancelled_at: expect.any(String), requested_by: expect.anything() });
  });
});
