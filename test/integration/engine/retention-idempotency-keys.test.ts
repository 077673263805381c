// A start's idempotency key answers its execution's id for a day (src/periodic/idempotency-key-expiry.ts);
// retention shorter than that dropped the execution and kept the key, so a repeat of the start
// answered an execution that was gone. The key now goes with its execution's range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

const WIDTH = 10;
const LO = 4_000_000;

let d: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  d = await createMigratedDatabase();
  await d.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO]);
  await run(null);
  await d.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO + 25]);
});
afterAll(async () => {
  await d?.drop();
});

const run = (retentionDays: number | null) => keepEventPartitions({ db: d.db, log: createLogger('silent') }, { width: WIDTH, retentionDays, archiveDir: null });

describe('retention and start idempotency keys', () => {
  it('drops the keys of a dropped range\'s executions and keeps those of a kept range', async () => {
    const { rows: [catalog] } = await d.db.query<{ id: string }>(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('ret/keys', 1, 'x', '{}') RETURNING catalog_id AS id`);
    // Range LO: finished two days ago; range LO + 10: an hour ago (kept at a retention of 0.5 days: 12 h).
    for (const [id, age] of [[LO + 1, '2 days'], [LO + 11, '1 hour']] as const) {
      await d.db.query(
        `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id, finished_at)
         VALUES ($1::bigint, $2, 'ret/keys', $1::bigint, 'completed', 1, now() - $3::interval)`,
        [id, catalog.id, age],
      );
      await d.db.query(`INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status) VALUES ($1, 1, $2, 'step.enter', 'completed')`, [id, catalog.id]);
      await d.db.query(
        `INSERT INTO core.idempotency_key (scope, key, request_hash, execution_id, status_code, response) VALUES ('run', $1, 'h', $2, 200, $3::json)`,
        [`k-${id}`, id, JSON.stringify({ execution_id: id })],
      );
    }
    const result = await run(0.5);
    expect(result.dropped.map((x) => x.range.lo)).toEqual([LO]);
    const { rows } = await d.db.query<{ key: string }>(`SELECT key FROM core.idempotency_key ORDER BY key`);
    expect(rows.map((r) => r.key)).toEqual([`k-${LO + 11}`]);
  });
});
