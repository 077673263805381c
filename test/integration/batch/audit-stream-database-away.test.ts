// A batch's status stream rides out a database that goes away for a moment, as the rest of the
// intake does (processing is tried again, the bus reconnects): it used to be cut mid-stream at the
// first poll that failed, before the batch was completed or failed.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBatchProcessor } from '../../../actors/batch-processor.ts';
import { buildApp } from '../../../src/app.ts';
import { Db } from '../../../src/db/db.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { DatabasePath } from '../../helpers/database-path.ts';
import { executionApi } from '../../helpers/execution-api.ts';

let t: TestApp;
let path: DatabasePath;
let away: { app: FastifyInstance; db: Db; url: string } | undefined;
let stopProcessors: (() => Promise<void>) | undefined;
beforeAll(async () => {
  // No processors at first: the batch stays accepted while the database is away.
  t = await startTestApp({ SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.1' }, { batchProcessors: false });
  path = DatabasePath.to(t.databaseUrl);
  await path.open();
  // A second server whose database is reached through that path: it serves the stream.
  const db = new Db(path.urlThrough(t.databaseUrl), 2);
  const app = await buildApp({ ...t.deps, db, metrics: createMetrics() });
  away = { app, db, url: await app.listen({ port: 0, host: '127.0.0.1' }) };
});
afterAll(async () => {
  await stopProcessors?.();
  await away?.app.close();
  await away?.db.close();
  await path?.cut();
  await t?.close();
});

it('keeps the stream open while the database is away, and ends it after the batch completes', async () => {
  const ex = executionApi(t.url);
  const b = batchApi(t.url);
  await ex.register(noopPlaybook('batch/stream-away', 2));
  const id = await ex.run('batch/stream-away');
  const row = await t.deps.db.query('SELECT command_id FROM core.command WHERE execution_id = $1', [id]);
  const cmd = await b.claim(Number(row.rows[0].command_id), 'w1');
  const accepted = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
  expect(accepted.status).toBe(202);

  const res = await fetch(`${away!.url}/api/events/batch/${accepted.body.request_id}/stream`);
  expect(res.status).toBe(200);
  const text = res.text().then(
    (body) => ({ body }),
    (err: unknown) => ({ cut: String(err) }),
  );
  await path.cut();
  await new Promise((ok) => setTimeout(ok, 1_000)); // several polls find the database away
  await path.open();
  stopProcessors = await startBatchProcessor(t.deps);

  // Before: { cut: 'TypeError: terminated' }, at the first poll of the database away.
  const got = await text;
  expect(got).toHaveProperty('body');
  const states = ('body' in got ? got.body : '')
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)![1]).state);
  expect(states[0]).toBe('accepted');
  expect(states.at(-1)).toBe('completed');
});
