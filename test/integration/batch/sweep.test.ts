import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { BATCH_RETENTION_SECONDS, sweepBatches } from '../../../src/periodic/batch-sweep.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

// The batch sweep (src/periodic/batch-sweep.ts, run by every() on one server of many) deletes
// finished requests, and so their idempotency keys, past their retention; nothing else.

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  t = await createMigratedDatabase();
});
afterAll(async () => t?.drop());

const insert = (state: string, ageSeconds: number) =>
  t.db.query(
    `INSERT INTO core.batch_request (request_id, execution_id, key_scope, idempotency_key, body_hash, event_ids, queue_depth, state, updated_at)
     VALUES ($1::uuid, 1, 'test', $1::text, 'h', '{1}', 1, $2, now() - make_interval(secs => $3))`,
    [randomUUID(), state, ageSeconds],
  );

describe('sweepBatches', () => {
  it('deletes finished requests past BATCH_RETENTION_SECONDS and keeps the rest', async () => {
    const old = BATCH_RETENTION_SECONDS + 60;
    await insert('completed', old);
    await insert('failed', old);
    await insert('completed', 60);
    await insert('accepted', old); // unfinished: a processor takes it, never the sweep
    expect(await sweepBatches({ db: t.db, log: createLogger('silent') })).toBe(2);
    const left = await t.db.query<{ state: string }>(`SELECT state FROM core.batch_request ORDER BY state`);
    expect(left.rows.map((r) => r.state)).toEqual(['accepted', 'completed']);
  });
});
