// A lone batch's accept statement may run for most of SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS:
// its bound was the timeout rounded down to half of it, so a batch storing in 0.13-0.2 s (the
// largest one SVC_BATCH_MAX_BYTES admits, 2 MiB, on this VM) was refused 503 ack_timeout every
// time under the default 0.25 s, though it had the time. Here the statement is held by the test
// (its execution's row locked) for 65 % of the timeout, then let go: it is stored, not refused.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';

const TIMEOUT_S = 2;
const HELD_MS = 1_300;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: String(TIMEOUT_S) });
  await executionApi(t.url).register(noopPlaybook('bound/one', 1));
});
afterAll(async () => t?.close());

it('stores a lone batch whose statement takes more than half the timeout, within it', async () => {
  const ex = executionApi(t.url);
  const b = batchApi(t.url);
  const id = await ex.run('bound/one');
  const db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  try {
    const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
    const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
    await db.query(`BEGIN; SELECT 1 FROM core.execution WHERE execution_id = ${id} FOR UPDATE`);
    const answer = b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    await new Promise((ok) => setTimeout(ok, HELD_MS));
    await db.query('ROLLBACK');
    const r = await answer;
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect((await b.settled(r.body.request_id)).state).toBe('completed');
  } finally {
    await db.end();
  }
});
