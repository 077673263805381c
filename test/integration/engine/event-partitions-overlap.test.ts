// Two retention runs at once (src/partitions/event-partitions.ts): the lease that elects one server
// for the partition work is held 10 minutes at most, and archiving a range of a million
// executions (tens of millions of events) can take longer, so a second server may start a run
// while the first still writes the range's archive. The second must leave the range to the
// first: two writers of one `.partial` file, the second reading rows the first already deleted,
// leave an archive that is not the range (and the range is then dropped).
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { archiveFileOf, readArchive } from '../../../src/partitions/archive-file.ts';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

const WIDTH = 10;
const FIRST_ID = 2_000_000;
const range = { lo: FIRST_ID, hi: FIRST_ID + WIDTH };

let t: TestApp;
let worker: WorkerProcess;
let archiveDir: string;
beforeAll(async () => {
  t = await startTestApp();
  worker = await startWorkerProcess(t.url, { concurrency: 4, env: { SVC_WORKER_TOKEN: t.workerToken } });
  archiveDir = await mkdtemp(join(tmpdir(), 'svc-archive-overlap-'));
  await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, false)`, [FIRST_ID]);
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: p, path: overlap/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n' })).status).toBe(201);
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await rm(archiveDir, { recursive: true, force: true });
});

it('a second run while the first archives a range leaves it to the first: the archive is the whole range, dropped once', async () => {
  const settings = (retentionDays: number | null) => ({ width: WIDTH, retentionDays, archiveDir });
  const ids: number[] = [];
  // One past the range: every id of it handed out.
  for (let i = 0; i <= WIDTH; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'overlap/one' })).body.execution_id);
  expect(ids[0]).toBe(FIRST_ID);
  await until('all completed', async () => (await t.deps.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n === ids.length, 30_000);
  // Ranges of WIDTH made from the lowest id with events (in the default partition until then).
  await keepEventPartitions(t.deps, settings(null));
  // A range whose archive takes a while: many pages of events (copies of each execution's own).
  await t.deps.db.query(
    `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error, created_at)
     SELECT e.execution_id, e.event_id + 1000 * g, e.catalog_id, e.event_type, e.status, e.step, e.command_id, e.worker_id, e.context, e.result, e.error, e.created_at
       FROM core.event e, generate_series(1, 400) g WHERE e.execution_id >= $1 AND e.execution_id < $2`,
    [range.lo, range.hi],
  );
  await t.deps.db.query(`UPDATE core.execution SET finished_at = now() - interval '2 days' WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi]);
  const events = (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.event WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi])).rows[0].n;
  expect(events).toBeGreaterThan(20_000);

  const file = archiveFileOf(archiveDir, range);
  const first = keepEventPartitions(t.deps, settings(1));
  // The second starts once the first is writing the range's archive.
  await until('the first writing its archive', async () => ((await stat(`${file}.partial`).catch(() => undefined))?.size ?? 0) > 0, 20_000, 1);
  const second = keepEventPartitions(t.deps, settings(1));
  const [a, b] = await Promise.allSettled([first, second]);
  for (const r of [a, b]) expect(r.status, r.status === 'rejected' ? String(r.reason) : '').toBe('fulfilled');
  const dropped = [a, b].flatMap((r) => (r.status === 'fulfilled' ? r.value.dropped.map((d) => d.range) : []));
  expect(dropped).toEqual([range]);

  // The archive is the range, every line whole.
  let executions = 0;
  let archived = 0;
  for await (const line of readArchive(file)) {
    if ('execution' in line) executions++;
    else archived++;
  }
  expect(executions).toBe(WIDTH);
  expect(archived).toBe(events);
  expect((await readdir(archiveDir)).filter((n) => n.endsWith('.partial'))).toEqual([]);
  expect((await t.deps.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi])).rows[0].n).toBe(0);
  // The execution past the range is whole.
  expect((await http(t.url, 'GET', `/api/executions/${ids.at(-1)}`)).body.status).toBe('completed');
}, 120_000);
