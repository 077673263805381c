// svc_batch_enqueue_latency_seconds is how long a batch took to be stored and enqueued from when
// it arrived: the time it waited behind another accept of its execution (accepts of one execution
// take turns) counts, as it counts toward SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS (ack_timeout).
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';

const HOLD_MS = 400;

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({}, { batchProcessors: false });
  await executionApi(t.url).register(noopPlaybook('latency/one', 1));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function observed(): Promise<{ count: number; sum: number }> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  return { count: value('svc_batch_enqueue_latency_seconds_count'), sum: value('svc_batch_enqueue_latency_seconds_sum') };
}

it('counts the wait behind another accept of the same execution', async () => {
  const id = await executionApi(t.url).run('latency/one');
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  const cmd = await batchApi(t.url).claim(Number(pending.rows[0].command_id), 'w1');
  const b = batchApi(t.url);
  const before = await observed();
  // The execution's row held: the first accept waits in PostgreSQL, the second behind it here.
  await db.query('BEGIN');
  await db.query('SELECT 1 FROM core.execution WHERE execution_id = $1 FOR UPDATE', [id]);
  const sent = performance.now();
  const first = b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(0, 1) }, asWorker);
  await new Promise((ok) => setTimeout(ok, 50));
  const second = b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(1) }, asWorker);
  await new Promise((ok) => setTimeout(ok, HOLD_MS));
  await db.query('COMMIT');
  const answers = await Promise.all([first, second]);
  const waited = (performance.now() - sent) / 1000;
  expect(answers.map((a) => a.status)).toEqual([202, 202]);
  const after = await observed();
  expect(after.count - before.count).toBe(2);
  // Each waited at least HOLD_MS - 50 ms for its ack; neither more than the whole.
  const sum = after.sum - before.sum;
  expect(sum).toBeGreaterThanOrEqual((2 * (HOLD_MS - 50)) / 1000);
  expect(sum).toBeLessThanOrEqual(2 * waited);
});
