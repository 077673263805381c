// Two batches with one Idempotency-Key that the acceptor took together (accepts queued behind
// others) were answered from the first: when its execution did not exist, the second, of an
// execution that does, got 404 "execution N not found" naming its own existing execution, and
// nothing was stored under the key. It is now stored on its own and answered 202.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(noopPlaybook('shared-key/one', 1));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const heartbeat = (id: number) => ({ execution_id: id, worker_id: 'w1', events: [{ event_type: 'command.heartbeat', context: { n: 1 } }] });

it('stores a batch of an existing execution sent together with one of a missing execution under the same key', async () => {
  const held = [await ex.run('shared-key/one'), await ex.run('shared-key/one'), await ex.run('shared-key/one')];
  const target = await ex.run('shared-key/one');
  // Three accepts in flight (the acceptor's most), each waiting for its execution's row, which
  // this transaction holds: the next two batches wait in the acceptor's queue and go together.
  const lock = new pg.Client({ connectionString: t.databaseUrl });
  await lock.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM core.execution WHERE execution_id = ANY($1) FOR UPDATE', [held]);
    const blocked = held.map((id) => b.post(heartbeat(id)));
    await until('three accepts waiting for the rows', async () => {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%jsonb_to_recordset%'`);
      return rows[0].n >= 3 || undefined;
    });
    const key = { 'Idempotency-Key': 'shared-key-1' };
    const missing = b.post(heartbeat(987654321), key);
    const existing = b.post(heartbeat(target), key);
    // Both are queued before the rows are let go.
    await new Promise((r) => setTimeout(r, 300));
    await lock.query('COMMIT');
    for (const r of await Promise.all(blocked)) expect(r.status).toBe(202);
    const [m, e] = await Promise.all([missing, existing]);
    expect(m.status).toBe(404);
    expect(m.body.detail).toContain('987654321');
    expect(e.status, JSON.stringify(e.body)).toBe(202);
    expect(e.body).toMatchObject({ duplicate: false, idempotency_key: 'shared-key-1' });
    const stored = await db.query('SELECT execution_id FROM core.batch_request WHERE idempotency_key = $1', ['shared-key-1']);
    expect(stored.rows.map((r) => Number(r.execution_id))).toEqual([target]);
    // Sent again, it is that batch.
    const again = await b.post(heartbeat(target), key);
    expect(again.body).toMatchObject({ duplicate: true, request_id: e.body.request_id });
  } finally {
    await lock.end();
  }
});
