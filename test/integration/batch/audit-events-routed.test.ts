// svc_events_routed_total counts the events of a batch once its processing routed them (they are
// written at their reserved ids by a routing that itself names no event).
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';

let t: TestApp;
let ex: ExecutionApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  ex = executionApi(t.url);
  await ex.register(noopPlaybook('m/two', 2));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

it("counts a batch's events once processing routed them", async () => {
  const b = batchApi(t.url);
  const id = await ex.run('m/two');
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
  const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
  const before = await metric('svc_events_routed_total');
  const posted = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }, asWorker);
  expect(posted.status).toBe(202);
  expect((await b.settled(posted.body.request_id)).state).toBe('completed');
  expect((await metric('svc_events_routed_total')) - before).toBe(3);
});
