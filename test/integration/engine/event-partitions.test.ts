// The partitioned event log (DESIGN.md "Scale-out"; migrations/0023_event_partitions.sql) on a
// real server and database: ranges made ahead of the ids, rows a missing range's default took
// moved into it, retention archiving and dropping whole ranges with every other execution intact,
// the archive read back; and the migration of a populated database losing no row.
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { migrate, MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { dropRangeRows, eventRanges } from '../../../src/db/partition.repo.ts';
import { archiveFileOf, archiveFiles, readArchive, type ArchiveLine } from '../../../src/partitions/archive-file.ts';
import { eventPartitionKeeper, keepEventPartitions, RANGES_AHEAD } from '../../../src/partitions/event-partitions.ts';
import { createLogger } from '../../../src/log.ts';
import { archiveCommand } from '../../../src/cli/archive-command.ts';
import type { TestApp } from '../../helpers/app.ts';
import { startArchiveStage, type ArchiveStage } from '../../helpers/archive-stage.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

const WIDTH = 10;
// Ids of this test start here: above the migration's first ranges of a million.
const FIRST_ID = 2_000_000;

let stage: ArchiveStage;
let t: TestApp;
let archiveDir: string;
beforeAll(async () => {
  stage = await startArchiveStage(FIRST_ID, 'apiVersion: svc/v1\nmetadata: { name: p, path: part/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n    next: two\n  - step: two\n    tool: { name: m, kind: noop }\n', 'svc-archive-');
  ({ t, archiveDir } = stage);
});
afterAll(async () => {
  await stage?.close();
});

const settings = (retentionDays: number | null) => ({ width: WIDTH, retentionDays, archiveDir });

async function runMany(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'part/one' })).body.execution_id);
  await until('all completed', async () => {
    const { rows } = await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids]);
    return rows[0].n === n;
  }, 30_000);
  return ids;
}

async function eventsOf(ids: number[]): Promise<Map<number, string[]>> {
  const { rows } = await t.deps.db.query<{ execution_id: string; types: string[] }>(
    `SELECT execution_id, array_agg(event_type ORDER BY event_id) AS types FROM core.event WHERE execution_id = ANY($1::bigint[]) GROUP BY 1`,
    [ids],
  );
  return new Map(rows.map((r) => [Number(r.execution_id), r.types]));
}

/**
 * CHECKs of a range's bounds left on core.event's ranges: each range is attached with one (so
 * the attach scans nothing) and loses it then, since the bound itself keeps the rule and the
 * CHECK would be evaluated again at every insert (migrations/0029).
 */
async function boundChecks(q: { query(text: string): Promise<pg.QueryResult> }): Promise<string[]> {
  const { rows } = await q.query(
    `SELECT c.conname AS name FROM pg_constraint c JOIN pg_inherits i ON i.inhrelid = c.conrelid
      WHERE i.inhparent = 'core.event'::regclass AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%execution_id%'`,
  );
  return rows.map((r) => String(r.name));
}

describe('the partitioned event log', () => {
  it('a start beyond the ranges lands in the default partition; making its range moves it there, events intact', async () => {
    const early = await runMany(3);
    const before = await eventsOf(early);
    const { rows } = await t.deps.db.query<{ part: string; n: number }>(`SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM core.event WHERE execution_id = ANY($1::bigint[]) GROUP BY 1`, [early]);
    expect(rows).toEqual([{ part: 'core.event_default', n: expect.any(Number) }]);
    const report = await keepEventPartitions(t.deps, settings(null));
    // The migration's ranges of a million ids held no event: made again at WIDTH, from the range
    // of the lowest id whose events wait in the default partition (no id below it has any), up to
    // RANGES_AHEAD ranges past the last id.
    expect(report.remade).toEqual([{ lo: 0, hi: 1_000_000 }, { lo: 1_000_000, hi: 2_000_000 }]);
    expect(report.made).toEqual(Array.from({ length: RANGES_AHEAD + 1 }, (_, i) => ({ lo: FIRST_ID + i * WIDTH, hi: FIRST_ID + (i + 1) * WIDTH })));
    expect(report.dropped).toEqual([]);
    const moved = await t.deps.db.query<{ part: string }>(`SELECT DISTINCT tableoid::regclass::text AS part FROM core.event WHERE execution_id = ANY($1::bigint[])`, [early]);
    expect(moved.rows).toEqual([{ part: `core.event_p${String(FIRST_ID).padStart(19, '0')}` }]);
    expect(await eventsOf(early)).toEqual(before);
    expect((await t.deps.db.query(`SELECT count(*)::int AS n FROM core.event_default`)).rows[0].n).toBe(0);
    expect(await boundChecks(t.deps.db)).toEqual([]);
    // Run again: nothing to make.
    expect((await keepEventPartitions(t.deps, settings(null))).made).toEqual([]);
  });

  it('retention archives and drops the ranges whose executions all finished long enough ago; every other execution is intact', async () => {
    // Ids FIRST_ID+3 .. FIRST_ID+24: the first two ranges are then used up, the third is in use.
    const more = await runMany(22);
    const all = [...Array.from({ length: 3 }, (_, i) => FIRST_ID + i), ...more];
    expect(more.at(-1)).toBe(FIRST_ID + 24);
    const before = await eventsOf(all);
    // One still running in the second range keeps that range.
    await t.deps.db.query(`UPDATE core.execution SET finished_at = NULL, status = 'running' WHERE execution_id = $1`, [FIRST_ID + 15]);
    await new Promise((r) => setTimeout(r, 1_100));
    // The third range is open, or (its ids all handed out ahead to this server) holds an
    // execution that finished just now: either ends the look.
    await t.deps.db.query(`UPDATE core.execution SET finished_at = now() WHERE execution_id = $1`, [FIRST_ID + 24]);
    const report = await keepEventPartitions(t.deps, settings(1 / 86_400));
    expect(report.dropped.map((d) => [d.range, d.executions])).toEqual([[{ lo: FIRST_ID, hi: FIRST_ID + WIDTH }, 10]]);
    const ranges = await eventRanges(t.deps.db);
    expect(ranges.some((r) => r.lo === FIRST_ID)).toBe(false);
    expect(ranges.some((r) => r.lo === FIRST_ID + WIDTH)).toBe(true);
    // The dropped range's executions are gone; every other one is whole.
    const gone = all.filter((id) => id < FIRST_ID + WIDTH);
    const kept = all.filter((id) => id >= FIRST_ID + WIDTH);
    expect((await http(t.url, 'GET', `/api/executions/${gone[0]}`)).status).toBe(404);
    expect((await t.deps.db.query(`SELECT count(*)::int AS n FROM core.command WHERE execution_id = ANY($1::bigint[])`, [gone])).rows[0].n).toBe(0);
    const after = await eventsOf(kept);
    for (const id of kept) expect(after.get(id), String(id)).toEqual(before.get(id));
    expect((await http(t.url, 'GET', `/api/executions/${kept[0]}`)).body.status).toBe('completed');
    // The archive holds the dropped range: its executions, then each one's events in order.
    const files = await archiveFiles(archiveDir);
    expect(files).toEqual(report.dropped.map((x) => x.archive));
    const lines: ArchiveLine[] = [];
    for await (const line of readArchive(files[0])) lines.push(line);
    const executions = lines.flatMap((l) => ('execution' in l ? [l.execution.execution_id] : []));
    expect(executions).toEqual(gone);
    for (const id of gone) {
      const types = lines.flatMap((l) => ('event' in l && l.event.execution_id === id ? [String(l.event.event_type)] : []));
      expect(types, String(id)).toEqual(before.get(id));
    }
    expect((await readdir(archiveDir)).filter((n) => n.endsWith('.partial'))).toEqual([]);
    // `svc archive` reads them back: the files, a file's executions, an execution's events.
    const cli = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await archiveCommand(argv, { write: (x: string) => (out += x) }, { write: (x: string) => (err += x) }, {});
      return { code, out, err };
    };
    expect(JSON.parse((await cli('list', '--dir', archiveDir, '--json')).out)).toEqual({ files, count: 1 });
    const shown = JSON.parse((await cli('show', files[0], '--json')).out);
    expect(shown.executions.map((e: { execution_id: number; events: number }) => [e.execution_id, e.events])).toEqual(gone.map((id) => [id, before.get(id)!.length]));
    const one = await cli('show', files[0], '--execution', String(gone[0]));
    expect(one.code).toBe(0);
    expect(one.out.split('\n')[1]).toMatch(/^1\s+execution\.started/);
    expect((await cli('show', files[0], '--execution', String(kept[0]))).code).toBe(4);
    expect((await cli('show', join(archiveDir, 'missing.jsonl'))).code).toBe(4);
    expect((await cli('list')).code).toBe(2);
  });
});

describe('retention at scale', () => {
  it('drops a range in short transactions, a child before its parent whatever their ids; a run cut off midway is finished by the next', async () => {
    // Rows made by hand in the range [FIRST_ID + 30, FIRST_ID + 40): a tree whose child has a
    // lower id than its parent (ids come in blocks per server), each execution with two commands
    // and three events, all finished two days ago.
    const lo = FIRST_ID + 30;
    const r = { lo, hi: lo + WIDTH };
    await t.deps.db.query(`UPDATE core.execution SET status = 'completed', finished_at = now() WHERE execution_id = $1`, [FIRST_ID + 15]);
    await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [FIRST_ID + 45]);
    await keepEventPartitions(t.deps, settings(null));
    const { rows: [catalog] } = await t.deps.db.query<{ id: string }>(`SELECT catalog_id AS id FROM core.catalog WHERE path = 'part/one'`);
    const parents: [number, number | null][] = [[lo, null], [lo + 3, null], [lo + 1, lo + 3], [lo + 4, lo + 3], [lo + 2, lo + 1], [lo + 5, null]];
    for (const [id, parent] of [...parents].sort((a, b) => (a[1] === null ? -1 : 1) - (b[1] === null ? -1 : 1) || a[0] - b[0])) {
      await t.deps.db.query(
        `INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, status, last_event_id, finished_at)
         VALUES ($1, $2, 'part/one', $3, $1, 'completed', 3, now() - interval '2 days')`,
        [id, catalog.id, parent],
      );
      await t.deps.db.query(`INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input) SELECT $1, $2, s, 'start', 'COMPLETED', '{}' FROM generate_series(1, 2) s`, [id, catalog.id]);
      await t.deps.db.query(`INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status) SELECT $1, e, $2, 'step.enter', 'completed' FROM generate_series(1, 3) e`, [id, catalog.id]);
    }
    const ids = parents.map(([id]) => id).sort((a, b) => a - b);
    // A run cut off midway: it had written the archive (its executions, as the database has
    // them: a file that does not hold them is not kept) and deleted some commands.
    const archive = archiveFileOf(archiveDir, r);
    const { rows: held } = await t.deps.db.query<{ row: object }>(`SELECT to_jsonb(e) - 'snapshot' AS row FROM core.execution e WHERE execution_id >= $1 AND execution_id < $2 ORDER BY execution_id`, [r.lo, r.hi]);
    const written = held.map((x) => `${JSON.stringify({ execution: x.row })}\n`).join('');
    await writeFile(archive, written);
    expect(await dropRangeRows(t.deps.db, r, 'commands', 5)).toBe(5);
    // The ranges before it go first (retention stops at the first that may not go).
    await new Promise((ok) => setTimeout(ok, 1_100));
    const report = await keepEventPartitions(t.deps, { ...settings(1 / 86_400), batchRows: 2 });
    const mine = report.dropped.find((d) => d.range.lo === lo);
    expect(mine).toEqual({ range: r, executions: 6, archive });
    expect((await eventRanges(t.deps.db)).some((x) => x.lo === lo)).toBe(false);
    for (const table of ['execution', 'command', 'event']) {
      expect((await t.deps.db.query(`SELECT count(*)::int AS n FROM core.${table} WHERE execution_id = ANY($1::bigint[])`, [ids])).rows[0].n, table).toBe(0);
    }
    // The archive the cut-off run wrote is whole (it was renamed into place): kept as it was.
    expect(await readFile(archive, 'utf8')).toBe(written);
  });
});

describe('retention of trigger fires', () => {
  it('forgets the fires of a dropped range\'s executions, and fires that started nothing once older than the retention; no other', async () => {
    const lo = FIRST_ID + 40;
    const r = { lo, hi: lo + WIDTH };
    await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [FIRST_ID + 55]);
    await keepEventPartitions(t.deps, settings(null));
    const { rows: [catalog] } = await t.deps.db.query<{ id: string }>(`SELECT catalog_id AS id FROM core.catalog WHERE path = 'part/one'`);
    for (const id of [lo, lo + 1]) {
      await t.deps.db.query(
        `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id, finished_at)
         VALUES ($1, $2, 'part/one', $1, 'completed', 0, now() - interval '2 days')`,
        [id, catalog.id],
      );
    }
    // Started fires of the range's two executions and of one in the next range (in use: kept);
    // fires that started nothing, one two days old, one just now.
    const fires: [string, string, number | null, string][] = [
      ['in-range-1', 'started', lo, '2 days'],
      ['in-range-2', 'started', lo + 1, '2 days'],
      ['next-range', 'started', lo + WIDTH, '2 days'],
      ['skipped-old', 'skipped', null, '2 days'],
      ['refused-old', 'refused', null, '3 days'],
      ['skipped-now', 'skipped', null, '0 days'],
    ];
    for (const [key, outcome, execution, age] of fires) {
      await t.deps.db.query(
        `INSERT INTO core.trigger_fire (path, name, fire_key, outcome, execution_id, fired_at) VALUES ('part/one', 'nightly', $1, $2, $3, now() - $4::interval)`,
        [key, outcome, execution, age],
      );
    }
    await new Promise((ok) => setTimeout(ok, 1_100));
    await t.deps.db.query(`UPDATE core.trigger_fire SET fired_at = now() WHERE fire_key = 'skipped-now'`);
    const report = await keepEventPartitions(t.deps, { ...settings(1 / 86_400), batchRows: 1 });
    expect(report.dropped.map((d) => d.range)).toContainEqual(r);
    expect(report.unstartedFires).toBe(2);
    const { rows } = await t.deps.db.query<{ fire_key: string }>(`SELECT fire_key FROM core.trigger_fire WHERE path = 'part/one' AND name = 'nightly' ORDER BY fire_key`);
    expect(rows.map((x) => x.fire_key)).toEqual(['next-range', 'skipped-now']);
    // Without a retention nothing is forgotten.
    await t.deps.db.query(`UPDATE core.trigger_fire SET fired_at = now() - interval '30 days' WHERE fire_key = 'skipped-now'`);
    expect((await keepEventPartitions(t.deps, settings(null))).unstartedFires).toBe(0);
    expect((await t.deps.db.query(`SELECT count(*)::int AS n FROM core.trigger_fire WHERE name = 'nightly'`)).rows[0].n).toBe(2);
  });
});

describe('retention past an execution that does not finish', () => {
  it('passes over a range an unfinished execution holds and drops the expired ones after it; a range of recent executions ends the look', async () => {
    const lo = FIRST_ID + 60;
    await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [lo + 45]);
    await keepEventPartitions(t.deps, settings(null));
    const { rows: [catalog] } = await t.deps.db.query<{ id: string }>(`SELECT catalog_id AS id FROM core.catalog WHERE path = 'part/one'`);
    // One execution a range: waiting for months, finished two days ago, finished now, finished two days ago.
    const made: [number, string, string | null][] = [[lo, 'running', null], [lo + 10, 'completed', '2 days'], [lo + 20, 'completed', '0 days'], [lo + 30, 'failed', '2 days']];
    for (const [id, status, age] of made) {
      await t.deps.db.query(
        `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id, finished_at)
         VALUES ($1, $2, 'part/one', $1, $3, 0, now() - $4::interval)`,
        [id, catalog.id, status, age],
      );
    }
    // The last id handed out started an execution a day ago (it runs on): whichever server was
    // handed the ids before it has let go of those it did not use, so the empty ranges before lo
    // (ids the earlier tests spent with setval) may go.
    await t.deps.db.query(
      `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id, started_at)
       VALUES ($1, $2, 'part/one', $1, 'running', 0, now() - interval '1 day')`,
      [lo + 45, catalog.id],
    );
    const range = (from: number) => ({ lo: from, hi: from + WIDTH });
    const first = await keepEventPartitions(t.deps, settings(1 / 24));
    expect(first.dropped.map((d) => d.range)).toContainEqual(range(lo + 10));
    for (const kept of [lo, lo + 20, lo + 30]) expect(first.dropped.map((d) => d.range)).not.toContainEqual(range(kept));
    const ids = async () => (await t.deps.db.query<{ id: string }>(`SELECT execution_id AS id FROM core.execution WHERE execution_id >= $1 AND execution_id < $2 ORDER BY 1`, [lo, lo + 40])).rows.map((r) => Number(r.id));
    expect(await ids()).toEqual([lo, lo + 20, lo + 30]);
    // Once the long one ends and the recent one ages, the rest go.
    await t.deps.db.query(`UPDATE core.execution SET status = 'completed', finished_at = now() - interval '2 days' WHERE execution_id = ANY($1::bigint[])`, [[lo, lo + 20]]);
    const second = await keepEventPartitions(t.deps, settings(1 / 24));
    expect(second.dropped.map((d) => d.range)).toEqual([range(lo), range(lo + 20), range(lo + 30)]);
    expect(await ids()).toEqual([]);
  });
});

describe('servers set to different widths', () => {
  it('settle on the width of the one whose first run came last; the others follow it, saying so once', async () => {
    const server = (width: number) => {
      const lines: string[] = [];
      const log = createLogger('warn', new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) }));
      return { run: eventPartitionKeeper({ db: t.deps.db, log }, { width, retentionDays: null, archiveDir: null }), lines };
    };
    const widths = async () => {
      const ranges = await eventRanges(t.deps.db);
      return ranges.slice(ranges.findIndex((r) => r.hi > FIRST_ID + 100)).map((r) => r.hi - r.lo);
    };
    const [wide, narrow] = [server(20), server(10)];
    expect((await wide.run()).width).toBe(20);
    expect(new Set(await widths())).toEqual(new Set([20]));
    // The narrow one's first run: its width, the empty ranges ahead made again at it.
    const first = await narrow.run();
    expect(first.width).toBe(10);
    expect(first.remade.length).toBeGreaterThan(0);
    const settled = await eventRanges(t.deps.db);
    expect(new Set(await widths())).toEqual(new Set([10]));
    // The wide one's later runs follow the ranges (before, each remade them at 20 by turns).
    for (let i = 0; i < 3; i++) {
      const r = await wide.run();
      expect({ width: r.width, remade: r.remade, made: r.made }).toEqual({ width: 10, remade: [], made: [] });
      expect((await narrow.run()).remade).toEqual([]);
    }
    expect(await eventRanges(t.deps.db)).toEqual(settled);
    expect(wide.lines.filter((l) => l.includes('not at SVC_EVENT_PARTITION_EXECUTIONS=20'))).toHaveLength(1);
    expect(narrow.lines).toEqual([]);
  });
});

describe('reading the ranges', () => {
  it('fails a read torn by another transaction dropping a range (never a list with the range left out); the next read is whole', async () => {
    const before = await eventRanges(t.deps.db);
    const last = before.at(-1)!;
    const other = new pg.Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT core.svc_event_partition_drop($1)`, [last.lo]);
      const read = eventRanges(t.deps.db).then(() => 'whole', (err: unknown) => String(err));
      await new Promise((r) => setTimeout(r, 200));
      await other.query('COMMIT');
      expect(await read).toMatch(/the event log ranges changed while they were read/);
      expect(await eventRanges(t.deps.db)).toEqual(before.slice(0, -1));
    } finally {
      await other.end();
    }
    await keepEventPartitions(t.deps, settings(null));
    expect(await eventRanges(t.deps.db)).toEqual(before);
  });
});

describe('the migration to a partitioned log', () => {
  it('converts a populated database without losing a row', async () => {
    const d = await createTestDatabase();
    const db = new Db(d.url, 2);
    const older = await mkdtemp(join(tmpdir(), 'svc-migrations-'));
    try {
      const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f) && f < '0023');
      for (const f of files) await copyFile(join(MIGRATIONS_DIR, f), join(older, f));
      await migrate(db, older);
      const c = new pg.Client({ connectionString: d.url });
      await c.connect();
      try {
        const catalog = (await c.query(`INSERT INTO core.catalog (path, version, kind, content, payload) VALUES ('m/one', 1, 'playbook', 'x', '{}') RETURNING catalog_id`)).rows[0].catalog_id;
        await c.query(`SELECT setval('core.execution_id_seq', 2500)`);
        await c.query(`INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status) SELECT g, $1, 'm/one', g, 'completed' FROM generate_series(1, 2500, 7) g`, [catalog]);
        await c.query(
          `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, context)
           SELECT e, i, $1, CASE WHEN i = 1 THEN 'execution.started' ELSE 'step.enter' END, 'running', jsonb_build_object('i', i, 'labels', jsonb_build_object('k', e::text))
             FROM generate_series(1, 2500, 7) e, generate_series(1, 9) i`,
          [catalog],
        );
        const digest = `SELECT count(*)::int AS n, md5(string_agg(execution_id || ':' || event_id || ':' || event_type || ':' || context::text, ',' ORDER BY execution_id, event_id)) AS h FROM core.event`;
        const before = (await c.query(digest)).rows[0];
        expect(before.n).toBe(358 * 9);
        await migrate(db);
        expect((await c.query(digest)).rows[0]).toEqual(before);
        expect((await c.query(`SELECT relkind FROM pg_class WHERE oid = 'core.event'::regclass`)).rows[0].relkind).toBe('p');
        expect((await c.query(`SELECT count(*)::int AS n FROM core.event_default`)).rows[0].n).toBe(0);
        expect(await boundChecks(c)).toEqual([]);
        // The label filter's index still serves: its query plans an index scan on the range.
        const plan = (await c.query(`EXPLAIN SELECT execution_id FROM core.event WHERE event_type = 'execution.started' AND context ? 'labels' AND context -> 'labels' @> '{"k": "8"}'`)).rows.map((r) => String(r['QUERY PLAN'])).join('\n');
        expect(plan).toMatch(/event_p0+_context_idx|Bitmap Index Scan/);
      } finally {
        await c.end();
      }
    } finally {
      await db.close();
      await d.drop();
      await rm(older, { recursive: true, force: true });
    }
  });
});
