// A failed batch sent again: with its Idempotency-Key the server answers the first 202 again
// (duplicate: true, status accepted) and stores nothing, so its events are still not routed; with
// a new key it is a new batch and is routed (docs/operations.md, Batch intake).
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '0.5' });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(noopPlaybook('resend/one', 1));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

it('a failed batch is routed when sent again with a new Idempotency-Key, not with its own', async () => {
  const id = await ex.run('resend/one');
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
  const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
  const body = { execution_id: id, worker_id: 'w1', events: commandReport(cmd) };
  // Every routing touches core.command first: holding it makes processing pass its timeout.
  const holder = new pg.Client({ connectionString: t.databaseUrl });
  await holder.connect();
  await holder.query('BEGIN; LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
  let first;
  try {
    first = await b.post(body, { ...asWorker, 'idempotency-key': 'report-1' });
    expect(first.status).toBe(202);
    expect(await b.settled(first.body.request_id, 10_000)).toMatchObject({ state: 'failed', error_code: 'processing_timeout' });
  } finally {
    await holder.query('COMMIT');
    await holder.end();
  }
  const same = await b.post(body, { ...asWorker, 'idempotency-key': 'report-1' });
  expect(same.status).toBe(202);
  expect(same.body).toMatchObject({ status: 'accepted', duplicate: true, request_id: first.body.request_id });
  expect((await b.status(first.body.request_id)).state).toBe('failed');
  expect((await ex.events(id)).filter((e) => e.event_type === 'command.completed')).toHaveLength(0);

  const fresh = await b.post(body, { ...asWorker, 'idempotency-key': 'report-1-again' });
  expect(fresh.body.duplicate).toBe(false);
  expect((await b.settled(fresh.body.request_id)).state).toBe('completed');
  expect((await ex.wait(id)).status).toBe('completed');
});
