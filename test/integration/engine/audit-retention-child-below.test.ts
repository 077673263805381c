// Ids come in blocks per server (actors/start-prelude-cache.ts), so a child started on one server
// can have a lower id, in an earlier range, than its parent started on another. Retention judged
// only children in later ranges: a parent whose child sat in an earlier range kept by an
// unfinished execution was taken for expired, its range's commands deleted and the parent not
// (its child points at it), and the run failed there ("still holds executions that could not be
// deleted") at every interval: no range after it was dropped, nor a fire that started nothing.
// Such a parent's range is now passed over, as one with a child in a later range is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { eventRanges } from '../../../src/db/partition.repo.ts';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

const WIDTH = 10;
const LO = 3_000_000;

let d: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  d = await createMigratedDatabase();
  // The ranges made from LO (a fresh database's start at the last id), then ids up to LO + 45 spent.
  await d.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO]);
  await run(null);
  await d.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO + 45]);
});
afterAll(async () => {
  await d?.drop();
});

const run = (retentionDays: number | null) => keepEventPartitions({ db: d.db, log: createLogger('silent') }, { width: WIDTH, retentionDays, archiveDir: null });

describe('retention of a parent whose child has a lower id', () => {
  it('passes over the parent\'s range while the child\'s range is kept, drops the ranges after it, and drops both once the child\'s goes', async () => {
    expect((await run(null)).made.length).toBeGreaterThan(0);
    const { rows: [catalog] } = await d.db.query<{ id: string }>(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('ret/child', 1, 'x', '{}') RETURNING catalog_id AS id`);
    // Range LO: an execution waiting for months and the child (LO + 1) of LO + 10; range LO + 10:
    // the parent; range LO + 20: an unrelated one; all finished two days ago but the first.
    const made: [number, number | null, string][] = [[LO + 10, null, 'completed'], [LO, null, 'running'], [LO + 1, LO + 10, 'completed'], [LO + 20, null, 'completed']];
    for (const [id, parent, status] of made) {
      await d.db.query(
        `INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, status, last_event_id, finished_at)
         VALUES ($1::bigint, $2, 'ret/child', $3::bigint, COALESCE($3::bigint, $1::bigint), $4::text, 1, CASE WHEN $4::text = 'running' THEN NULL ELSE now() - interval '2 days' END)`,
        [id, catalog.id, parent, status],
      );
      await d.db.query(`INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input) VALUES ($1, $2, 1, 'start', 'COMPLETED', '{}')`, [id, catalog.id]);
      await d.db.query(`INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status) VALUES ($1, 1, $2, 'step.enter', 'completed')`, [id, catalog.id]);
    }
    const range = (lo: number) => ({ lo, hi: lo + WIDTH });
    const count = async (table: string, id: number) => (await d.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.${table} WHERE execution_id = $1`, [id])).rows[0].n;

    const first = await run(1);
    // (LO + 30, empty and all handed out, stays: the server handed its ids may hold them unused,
    // and no execution past it shows that it let them go, audit-retention-held-ids.test.ts.)
    expect(first.dropped.map((x) => x.range)).toEqual([range(LO + 20)]);
    // The parent is whole: its row, command and event.
    for (const table of ['execution', 'command', 'event']) expect(await count(table, LO + 10), table).toBe(1);
    expect((await eventRanges(d.db)).some((r) => r.lo === LO + 10)).toBe(true);

    // The long one ends: the child's range goes, then its parent's.
    await d.db.query(`UPDATE core.execution SET status = 'completed', finished_at = now() - interval '2 days' WHERE execution_id = $1`, [LO]);
    const second = await run(1);
    expect(second.dropped.map((x) => x.range)).toEqual([range(LO), range(LO + 10)]);
    for (const id of [LO, LO + 1, LO + 10, LO + 20]) expect(await count('execution', id), String(id)).toBe(0);
  });
});
