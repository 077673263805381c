// The partition run's session lock (held while a range is archived, which may outlast the lease)
// sat on a connection left idle for the whole run: a database or role with idle_session_timeout
// (PostgreSQL 14+) ended that session mid-run, the lock went with it, and a second run started
// while the first was still archiving the range (it failed renaming the `.partial` file the first
// had renamed already: ENOENT). The lock's session now turns that timeout off for itself.
import { stat } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { archiveFileOf, readArchive } from '../../../src/partitions/archive-file.ts';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { createLogger } from '../../../src/log.ts';
import type { TestApp } from '../../helpers/app.ts';
import { startArchiveStage, type ArchiveStage } from '../../helpers/archive-stage.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

const WIDTH = 10;
const FIRST_ID = 2_000_000;
const range = { lo: FIRST_ID, hi: FIRST_ID + WIDTH };
const IDLE_MS = 400;

let stage: ArchiveStage;
let t: TestApp;
let archiveDir: string;
beforeAll(async () => {
  stage = await startArchiveStage(FIRST_ID, 'apiVersion: svc/v1\nmetadata: { name: p, path: idle/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n', 'svc-archive-idle-');
  ({ t, archiveDir } = stage);
});
afterAll(async () => {
  await stage?.close();
});

it('holds its lock through a run longer than the database\'s idle_session_timeout: a second run meanwhile is skipped', async () => {
  const settings = { width: WIDTH, retentionDays: 1, archiveDir };
  const ids: number[] = [];
  for (let i = 0; i <= WIDTH; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'idle/one' })).body.execution_id);
  await until('all completed', async () => (await t.deps.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n === ids.length, 30_000);
  await keepEventPartitions(t.deps, { ...settings, retentionDays: null });
  await t.deps.db.query(
    `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error, created_at)
     SELECT e.execution_id, e.event_id + 1000 * g, e.catalog_id, e.event_type, e.status, e.step, e.command_id, e.worker_id, e.context, e.result, e.error, e.created_at
       FROM core.event e, generate_series(1, 1500) g WHERE e.execution_id >= $1 AND e.execution_id < $2`,
    [range.lo, range.hi],
  );
  await t.deps.db.query(`UPDATE core.execution SET finished_at = now() - interval '2 days' WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi]);
  const events = (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.event WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi])).rows[0].n;

  // Servers whose sessions end after IDLE_MS idle (the operator's setting on the database).
  const name = (await t.deps.db.query<{ d: string }>('SELECT current_database() AS d')).rows[0].d;
  await t.deps.db.query(`ALTER DATABASE ${name} SET idle_session_timeout = ${IDLE_MS}`);
  const url = t.databaseUrl;
  const a = new Db(url, 10);
  const b = new Db(url, 10);
  const log = createLogger('silent');
  try {
    const file = archiveFileOf(archiveDir, range);
    const first = keepEventPartitions({ db: a, log }, settings);
    await until('the first writing its archive', async () => ((await stat(`${file}.partial`).catch(() => undefined))?.size ?? 0) > 0, 20_000, 1);
    await new Promise((ok) => setTimeout(ok, IDLE_MS + 400));
    const writing = await stat(`${file}.partial`).then(() => true, () => false);
    const second = keepEventPartitions({ db: b, log }, settings);
    const [ra, rb] = await Promise.allSettled([first, second]);
    // The first was still archiving when the second began; the second left the range to it.
    expect(writing).toBe(true);
    expect(rb.status === 'fulfilled' ? rb.value : String(rb.reason)).toMatchObject({ skipped: true, dropped: [] });
    expect(ra.status === 'fulfilled' && ra.value.dropped.map((d) => d.range)).toEqual([range]);
    let archived = 0;
    for await (const line of readArchive(file)) if ('event' in line) archived++;
    expect(archived).toBe(events);
  } finally {
    // On a session of its own: the pools' idle ones may have been ended meanwhile.
    const reset = new Db(url, 1);
    await reset.query(`ALTER DATABASE ${name} RESET idle_session_timeout`);
    await reset.close();
    await a.close();
    await b.close();
  }
}, 120_000);
