import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Queryable } from '../../../src/db/queryable.ts';
import { claimBatches } from '../../../src/db/batch.repo.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

// A processor taking an execution's batches waits for accepts of it still in flight: such an
// accept found the processor's job waiting and sent none of its own (the queue keeps one waiting
// job per execution), so its batch would otherwise wait for the next one.

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  t = await createMigratedDatabase();
  await t.db.query(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('p', 1, '', '{}')`);
  await t.db.query(`INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id) VALUES (7, 1, 'p', 7)`);
});
afterAll(async () => t?.drop());

const insertBatch = (c: Queryable, key: string) =>
  c.query(
    `INSERT INTO core.batch_request (request_id, execution_id, key_scope, idempotency_key, body_hash, events, event_ids, queue_depth)
     VALUES ($1, 7, 'test', $2, 'h', '[{"event_type": "call.done"}]', ARRAY[nextval('core.batch_event_id_seq')], 1)`,
    [randomUUID(), key],
  );

describe('claimBatches', () => {
  it('waits for an accept of the execution still in flight and takes its batch too', async () => {
    await insertBatch(t.db, 'committed');
    const accept = new pg.Client({ connectionString: t.url });
    await accept.connect();
    try {
      // An accept in flight: the execution's row locked, its batch stored, not yet committed.
      await accept.query('BEGIN');
      await accept.query('SELECT 1 FROM core.execution WHERE execution_id = 7 FOR UPDATE');
      await insertBatch(accept, 'in flight');
      let settled = false;
      const claim = claimBatches(t.db, [7], 1_000).finally(() => (settled = true));
      await new Promise((ok) => setTimeout(ok, 300));
      expect(settled).toBe(false);
      await accept.query('COMMIT');
      const { batches } = await claim;
      expect(batches).toHaveLength(2);
      expect(batches.every((b) => !b.routed && b.events.length === 1)).toBe(true);
    } finally {
      await accept.end();
    }
  });
});
