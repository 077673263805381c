// After a database outage the batch processor backed off between claims (1 s doubling to 30 s),
// and a batch accepted once the database was back waited out the rest of that back-off: 21.7 s
// after a 40 s outage (recovery audit). An accepted batch is committed, so the database is up:
// its wake-up now ends the back-off, and the batch is processed at once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBatchProcessor } from '../../../actors/batch-processor.ts';
import { Db } from '../../../src/db/db.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { DatabasePath } from '../../helpers/database-path.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let path: DatabasePath;
let processorDb: Db | undefined;
let stopProcessors: (() => Promise<void>) | undefined;
beforeAll(async () => {
  // The server accepts batches on its own connection; its processors reach the database through
  // a path the test cuts, as a processor on the far side of an outage does.
  t = await startTestApp({}, { batchProcessors: false });
  path = DatabasePath.to(t.databaseUrl);
  await path.open();
  processorDb = new Db(path.urlThrough(t.databaseUrl), 2);
  stopProcessors = await startBatchProcessor({ ...t.deps, db: processorDb });
});
afterAll(async () => {
  await stopProcessors?.();
  await processorDb?.close();
  await path?.cut();
  await t?.close();
});

it('processes a batch accepted after an outage at once, not after the back-off', async () => {
  const ex = executionApi(t.url);
  const b = batchApi(t.url);
  await ex.register(noopPlaybook('batch/after-outage', 2));
  const id = await ex.run('batch/after-outage');
  const row = await t.deps.db.query('SELECT command_id FROM core.command WHERE execution_id = $1', [id]);
  const cmd = await b.claim(Number(row.rows[0].command_id), 'w1');

  // 16 s away: claims failed after 0, 1, 3, 7 and 15 s, and the next waits 16 s more.
  await path.cut();
  await new Promise((ok) => setTimeout(ok, 16_000));
  await path.open();

  const accepted = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
  expect(accepted.status).toBe(202);
  const t0 = Date.now();
  await until('the batch is completed', async () => (await b.status(accepted.body.request_id)).state === 'completed' || undefined, 30_000, 50);
  // Before: 10 to 15 s (the back-off's end); now the wake-up's claim, well under that.
  expect(Date.now() - t0).toBeLessThan(5_000);
}, 60_000);
