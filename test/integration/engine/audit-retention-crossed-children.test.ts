// Ids come in blocks per server (actors/start-prelude-cache.ts): near a range's end a parent on
// one server (range A) can start a child on another (range B), and that child a grandchild back
// on the first (range A again). Each range then holds a child of the other, and retention, which
// keeps a range while a child of it sits in another ("a child's range goes first"), kept both
// for ever, whatever their age: two whole ranges (two million executions by default) never
// dropped. Ranges linked only by their own children, all expired, now go together.
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
  await d.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO + 45]);
});
afterAll(async () => {
  await d?.drop();
});

const run = (retentionDays: number | null) => keepEventPartitions({ db: d.db, log: createLogger('silent') }, { width: WIDTH, retentionDays, archiveDir: null });

async function insert(id: number, parent: number | null, status: string, catalogId: string): Promise<void> {
  await d.db.query(
    `INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, status, last_event_id, finished_at)
     VALUES ($1::bigint, $2, 'ret/cross', $3::bigint, COALESCE($3::bigint, $1::bigint), $4::text, 1, CASE WHEN $4::text = 'running' THEN NULL ELSE now() - interval '2 days' END)`,
    [id, catalogId, parent, status],
  );
  await d.db.query(`INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input) VALUES ($1, $2, 1, 'start', 'COMPLETED', '{}')`, [id, catalogId]);
  await d.db.query(`INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status) VALUES ($1, 1, $2, 'step.enter', 'completed')`, [id, catalogId]);
}

const count = async (id: number) => (await d.db.query<{ n: number }>(`SELECT (SELECT count(*) FROM core.execution WHERE execution_id = $1) + (SELECT count(*) FROM core.event WHERE execution_id = $1) AS n`, [id])).rows[0].n;

describe('retention of ranges that hold each other\'s children', () => {
  it('drops them together once all their executions expired; a range whose child is recent stays', async () => {
    const { rows: [catalog] } = await d.db.query<{ id: string }>(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('ret/cross', 1, 'x', '{}') RETURNING catalog_id AS id`);
    // Range LO: the parent (LO + 8) and its grandchild (LO + 9); range LO + 10: the child (LO + 10).
    // Range LO + 20: a parent (LO + 20) whose grandchild in range LO + 30 (LO + 31) finished
    // within the retention, its child (LO + 30) long ago: those two stay.
    const made: [number, number | null][] = [[LO + 8, null], [LO + 10, LO + 8], [LO + 9, LO + 10], [LO + 20, null], [LO + 30, LO + 20], [LO + 31, LO + 30]];
    for (const [id, parent] of made) await insert(id, parent, 'completed', catalog.id);
    await d.db.query(`UPDATE core.execution SET finished_at = now() WHERE execution_id = $1`, [LO + 31]);

    const first = await run(1);
    expect(first.dropped.map((x) => x.range.lo).sort()).toEqual([LO, LO + 10]);
    expect(first.dropped.reduce((n, x) => n + x.executions, 0)).toBe(3);
    for (const id of [LO + 8, LO + 9, LO + 10]) expect(await count(id), String(id)).toBe(0);
    for (const id of [LO + 20, LO + 30, LO + 31]) expect(await count(id), String(id)).toBe(2);
  });
});
