// A batch accepted (202) whose routing found the execution's log moved on by other writers at
// every attempt (batches accepted for it back to back, 300 KB each: 1 of 60 in the bad-input
// audit) was ended `batch.failed` with processing_error, its events refused: accepted work the
// client had to find out about and send again. Nothing was written by those attempts, so the
// processor now tries the execution again later, as when the database is away, and the batch
// completes once the contention is over. Real server and database; the contention is a trigger
// that fails the routing's insert as a moved-on guard does (40001), until the test lifts it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let db: pg.Client;
let b: BatchApi;
beforeAll(async () => {
  t = await startTestApp();
  b = batchApi(t.url);
  await executionApi(t.url).register(noopPlaybook('contended/one', 1));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.query('DROP TRIGGER IF EXISTS contend ON core.event').catch(() => undefined);
  await db?.end();
  await t?.close();
});

describe('a batch whose routing stays contended', () => {
  it('is tried again, not failed, and completes once the contention ends', async () => {
    const id = await executionApi(t.url).run('contended/one');
    const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
    const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
    await db.query(`CREATE FUNCTION pg_temp.contend() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'another writer moved the log on' USING ERRCODE = '40001'; END $$`);
    await db.query(`CREATE TRIGGER contend BEFORE INSERT ON core.event FOR EACH ROW WHEN (NEW.event_type = 'call.done') EXECUTE FUNCTION pg_temp.contend()`);
    const accepted = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    expect(accepted.status).toBe(202);
    // Every attempt of the routing fails meanwhile; the batch stays accepted, not failed.
    await until('the routing tried and gave up once', async () => {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.event WHERE execution_id = $1`, [id]);
      return rows[0].n > 0 && (await b.status(accepted.body.request_id)).state !== 'queued';
    });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await b.status(accepted.body.request_id)).state).not.toBe('failed');
    await db.query('DROP TRIGGER contend ON core.event');
    const done = await b.settled(accepted.body.request_id, 60_000);
    expect(done).toMatchObject({ state: 'completed' });
    const events = (await http(t.url, 'GET', `/api/events/${id}`)).body.events as Json[];
    expect(events.filter((e) => e.event_type === 'command.completed')).toHaveLength(1);
    expect(events.filter((e) => e.event_type === 'batch.failed')).toHaveLength(0);
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
  });
});
