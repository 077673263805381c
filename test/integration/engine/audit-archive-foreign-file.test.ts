// Retention kept any archive file already at a range's name as "written by a run cut off before
// the drop", without looking in it: a file of another database archiving to the same
// SVC_ARCHIVE_DIR (same ids, other executions) made it drop the range's 10 executions unarchived.
// Such a file now fails the run before anything is deleted, and is left as it is.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventRanges } from '../../../src/db/partition.repo.ts';
import { archiveFileOf, readArchive } from '../../../src/partitions/archive-file.ts';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import type { TestApp } from '../../helpers/app.ts';
import { startArchiveStage, type ArchiveStage } from '../../helpers/archive-stage.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

const WIDTH = 10;
const FIRST_ID = 2_000_000;
const range = { lo: FIRST_ID, hi: FIRST_ID + WIDTH };

let stage: ArchiveStage;
let t: TestApp;
let archiveDir: string;
beforeAll(async () => {
  stage = await startArchiveStage(FIRST_ID, 'apiVersion: svc/v1\nmetadata: { name: p, path: foreign/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n', 'svc-archive-foreign-');
  ({ t, archiveDir } = stage);
});
afterAll(async () => {
  await stage?.close();
});

const inRange = async (table: string): Promise<number> =>
  (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.${table} WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi])).rows[0].n;

it('keeps a range whose archive name holds another database\'s file, drops nothing, and archives it once that file is moved away', async () => {
  const settings = { width: WIDTH, retentionDays: 1 / 86_400, archiveDir };
  const ids: number[] = [];
  for (let i = 0; i <= WIDTH; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'foreign/one' })).body.execution_id);
  expect(ids[0]).toBe(FIRST_ID);
  await until('all completed', async () => (await t.deps.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n === ids.length, 30_000);
  await keepEventPartitions(t.deps, { ...settings, retentionDays: null });
  await t.deps.db.query(`UPDATE core.execution SET finished_at = now() - interval '2 days' WHERE execution_id >= $1 AND execution_id < $2`, [range.lo, range.hi]);
  const events = await inRange('event');

  // Another database's archive of the same ids: its executions started at other times, with other logs.
  const file = archiveFileOf(archiveDir, range);
  const foreign = ids.slice(0, WIDTH).map((id) => `${JSON.stringify({ execution: { execution_id: id, path: 'elsewhere/one', status: 'completed', started_at: '2025-01-02T03:04:05.678+00:00', last_event_id: 3 } })}\n`).join('');
  await writeFile(file, foreign);

  await expect(keepEventPartitions(t.deps, settings)).rejects.toThrow(/does not hold execution 2000000 as this database has it/);
  expect(await inRange('execution')).toBe(WIDTH);
  expect(await inRange('event')).toBe(events);
  expect((await eventRanges(t.deps.db)).some((r) => r.lo === range.lo)).toBe(true);
  expect(await readFile(file, 'utf8')).toBe(foreign);

  // Moved away, the range is archived (its own file) and dropped.
  await rename(file, join(archiveDir, 'elsewhere.jsonl'));
  const report = await keepEventPartitions(t.deps, settings);
  expect(report.dropped.map((d) => [d.range, d.executions, d.archive])).toEqual([[range, WIDTH, file]]);
  let executions = 0;
  let archived = 0;
  for await (const line of readArchive(file)) {
    if ('execution' in line) executions++;
    else archived++;
  }
  expect([executions, archived]).toEqual([WIDTH, events]);
  expect(await inRange('execution')).toBe(0);
}, 120_000);
