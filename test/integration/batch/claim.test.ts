import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Queryable } from '../../../src/db/queryable.ts';
import { claimBatches, type ClaimedBatch } from '../../../src/db/batch.repo.ts';
import { createMigratedDatabase, createTestDatabase } from '../../helpers/database.ts';
import { Db } from '../../../src/db/db.ts';
import { migrate } from '../../../src/db/migrate.ts';

// Processors claim batch rows themselves: an execution's oldest unfinished batch is its head; a
// processor takes an execution by locking its head (SKIP LOCKED) and moving its batches to
// `processing`, held until the lease runs out. One processor per execution at a time, in order.

const LEASE_SECONDS = 20;
const EXECUTIONS = [7, 8, 9];

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  t = await createMigratedDatabase();
  await t.db.query(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('p', 1, '', '{}')`);
  for (const id of EXECUTIONS) await t.db.query(`INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id) VALUES ($1, 1, 'p', $1)`, [id]);
});
afterAll(async () => t?.drop());
beforeEach(async () => {
  await t.db.query('DELETE FROM core.batch_request');
});

/** Stores a batch of `events` items for the execution; returns its batch_id. */
const insertBatch = async (c: Queryable, execution: number, events = 1): Promise<number> => {
  const { rows } = await c.query<{ batch_id: string }>(
    `INSERT INTO core.batch_request (request_id, execution_id, key_scope, idempotency_key, body_hash, events, event_ids, queue_depth)
     SELECT $1::uuid, $2, 'test', $1::text, 'h', jsonb_agg('{"event_type": "call.done"}'::jsonb), array_agg(g::bigint), 1
       FROM generate_series(1, $3::int) AS g
     RETURNING batch_id`,
    [randomUUID(), execution, events],
  );
  return Number(rows[0].batch_id);
};
const next = (q: Queryable, executions = 4, maxEvents = 1_000) => claimBatches(q, { next: executions, leaseSeconds: LEASE_SECONDS }, maxEvents);
const ids = (batches: ClaimedBatch[]) => batches.map((b) => b.batch_id);

describe('claimBatches', () => {
  it('takes the executions of the oldest heads, each execution’s batches in order', async () => {
    const a1 = await insertBatch(t.db, 8);
    const b1 = await insertBatch(t.db, 7);
    const a2 = await insertBatch(t.db, 8);
    await insertBatch(t.db, 9);
    const claimed = await next(t.db, 2);
    expect(claimed.map((b) => [b.execution_id, b.batch_id])).toEqual([[7, b1], [8, a1], [8, a2]]);
    const rows = await t.db.query(`SELECT batch_id, state, attempts FROM core.batch_request WHERE execution_id IN (7, 8) ORDER BY batch_id`);
    expect(rows.rows.every((r) => r.state === 'processing' && r.attempts === 1)).toBe(true);
  });

  it('never takes an execution another processor holds, not even its later batches', async () => {
    await insertBatch(t.db, 7);
    expect((await next(t.db)).map((b) => b.execution_id)).toEqual([7]);
    const later = await insertBatch(t.db, 7);
    expect(await next(t.db)).toEqual([]);
    // Until its lease runs out: then the execution is taken again, its first batch with it.
    await t.db.query(`UPDATE core.batch_request SET updated_at = now() - make_interval(secs => $1) WHERE execution_id = 7 AND batch_id < $2`, [LEASE_SECONDS + 1, later]);
    const again = await next(t.db);
    expect(again.map((b) => b.batch_id)).toHaveLength(2);
    expect(again.at(-1)!.batch_id).toBe(later);
  });

  it('passes over a head another processor is taking, and the rest of its execution', async () => {
    const head = await insertBatch(t.db, 7);
    await insertBatch(t.db, 7);
    const other = await insertBatch(t.db, 8);
    const c = new pg.Client({ connectionString: t.url });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT 1 FROM core.batch_request WHERE batch_id = $1 FOR UPDATE', [head]);
      expect(ids(await next(t.db))).toEqual([other]);
    } finally {
      await c.query('ROLLBACK');
      await c.end();
    }
    expect((await next(t.db)).map((b) => b.execution_id)).toEqual([7, 7]);
  });

  it('takes up to maxEventsEach events of an execution (its first batch always); the rest are its next head', async () => {
    const first = await insertBatch(t.db, 7, 3);
    const second = await insertBatch(t.db, 7, 3);
    const third = await insertBatch(t.db, 7, 3);
    expect(ids(await next(t.db, 4, 2))).toEqual([first]);
    await t.db.query(`UPDATE core.batch_request SET state = 'completed' WHERE batch_id = $1`, [first]);
    expect(ids(await next(t.db, 4, 4))).toEqual([second, third]);
  });

  it('hands each execution to one of many processors claiming at once', async () => {
    for (let i = 0; i < 30; i++) await insertBatch(t.db, EXECUTIONS[i % EXECUTIONS.length]);
    const pools = Array.from({ length: 6 }, () => new Db(t.url, 1));
    try {
      const claims = await Promise.all(pools.map((p) => next(p, 1)));
      const taken = claims.flatMap((c) => [...new Set(c.map((b) => b.execution_id))]);
      expect(new Set(taken).size).toBe(taken.length);
      expect(taken.sort()).toEqual(EXECUTIONS);
      // Each execution whole: all its 10 batches, in order.
      for (const c of claims.filter((x) => x.length)) {
        expect(c).toHaveLength(10);
        expect(ids(c)).toEqual([...ids(c)].sort((x, y) => x - y));
      }
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  });

  it('takes executions named by the caller (which holds them) whatever their lease', async () => {
    const a = await insertBatch(t.db, 7);
    expect(ids(await next(t.db))).toEqual([a]);
    const again = await claimBatches(t.db, { executions: [7] }, 1_000);
    expect(again.map((b) => [b.batch_id, b.routed])).toEqual([[a, false]]);
    const row = await t.db.query(`SELECT attempts FROM core.batch_request WHERE batch_id = $1`, [a]);
    expect(row.rows[0].attempts).toBe(2);
  });
});

describe('migration 0014', () => {
  it('drops the job queue schema of earlier versions (pg-boss)', async () => {
    const d = await createTestDatabase();
    const db = new Db(d.url, 1);
    try {
      await db.query(`CREATE SCHEMA pgboss; CREATE TABLE pgboss.job (id uuid PRIMARY KEY)`);
      await migrate(db);
      expect((await db.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss'`)).rows).toEqual([]);
    } finally {
      await db.close();
      await d.drop();
    }
  });
});
