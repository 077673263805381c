// svc_batch_first_worker_claim_latency_seconds when the worker waits on the server that processes
// the batch: its long poll is parked there, and the batch's routing hands it the command it issues
// in its own write (claim-ahead), the usual way a busy pool gets its next command. That first
// claim is the batch's too, and is observed, as a claim through another server or a later poll is.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await executionApi(t.url).register(noopPlaybook('first-claim/parked', 2));
});
afterAll(async () => {
  await t?.close();
});

async function count(): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  return Number(/^svc_batch_first_worker_claim_latency_seconds_count (\S+)$/m.exec(text)?.[1]);
}

it('observes the first claim of a worker parked on the server that routes the batch', async () => {
  const ex = executionApi(t.url);
  const b = batchApi(t.url);
  const id = await ex.run('first-claim/parked');
  const pending = await t.deps.db.query<{ command_id: string }>(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
  const before = await count();
  // Parked before the batch is sent: nothing is pending until its routing commits.
  const poll = http(t.url, 'POST', '/api/worker/claim', { worker_id: 'here', max: 1, wait_ms: 15_000 }, asWorker);
  await new Promise((ok) => setTimeout(ok, 300));
  const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }, asWorker);
  expect(r.status).toBe(202);
  const answer = await poll;
  expect(answer.status).toBe(200);
  expect(answer.body.commands.map((c: { step: string }) => c.step)).toEqual(['s2']);
  await b.settled(r.body.request_id);
  const row = await t.deps.db.query(`SELECT c.issued_by_batch, r.batch_id FROM core.command c, core.batch_request r WHERE c.execution_id = $1 AND c.step = 's2' AND r.request_id = $2`, [id, r.body.request_id]);
  expect(String(row.rows[0].issued_by_batch)).toBe(String(row.rows[0].batch_id));
  expect((await count()) - before).toBe(1);
});
