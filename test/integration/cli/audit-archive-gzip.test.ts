// `svc archive` did not read archives an operator had compressed (`gzip events-….jsonl`, as old
// logs are kept): `list` left `events-…jsonl.gz` out ("no archive files under DIR"), and `show`
// of it said "line 1 is not JSON (an archive file is JSON Lines)", exit 1, of a file that holds
// the whole range. Both now read gzip (known by its first bytes); one cut short says so.
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import type { TestApp } from '../../helpers/app.ts';
import { startArchiveStage, type ArchiveStage } from '../../helpers/archive-stage.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

const WIDTH = 10;
const FIRST_ID = 4_000_000;

let stage: ArchiveStage;
let t: TestApp;
let archiveDir: string;
beforeAll(async () => {
  stage = await startArchiveStage(FIRST_ID, 'apiVersion: svc/v1\nmetadata: { name: p, path: gz/unicode }\nworkflow:\n  - step: stärt\n    tool: { name: n, kind: noop }\n', 'svc-archive-gzip-');
  ({ t, archiveDir } = stage);
});
afterAll(async () => {
  await stage?.close();
});

const svc = (...args: string[]) => runSvc(['archive', ...args], {});

it('lists and shows an archive compressed with gzip; one cut short is refused, saying so', async () => {
  const ids: number[] = [];
  for (let i = 0; i <= WIDTH; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'gz/unicode', payload: { note: `ü-${i}` } })).body.execution_id);
  expect(ids[0]).toBe(FIRST_ID);
  await until('all completed', async () => (await t.deps.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n === ids.length, 30_000);
  await keepEventPartitions(t.deps, { width: WIDTH, retentionDays: null, archiveDir });
  await t.deps.db.query(`UPDATE core.execution SET finished_at = now() - interval '2 days' WHERE execution_id >= $1 AND execution_id < $2`, [FIRST_ID, FIRST_ID + WIDTH]);
  const report = await keepEventPartitions(t.deps, { width: WIDTH, retentionDays: 1, archiveDir });
  const file = report.dropped.find((d) => d.range.lo === FIRST_ID)?.archive;
  expect(file).toBeTruthy();
  const plain = JSON.parse((await svc('show', file!, '--json')).stdout);
  expect(plain.count).toBe(WIDTH);

  // Compressed as an operator would, the original gone.
  const packed = gzipSync(await readFile(file!));
  await writeFile(`${file}.gz`, packed);
  await unlink(file!);
  const listed = await svc('list', '--dir', archiveDir, '--json');
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.stdout)).toEqual({ files: [`${file}.gz`], count: 1 });
  const shown = await svc('show', basename(`${file}.gz`), '--dir', archiveDir, '--json');
  expect(shown.stderr).toBe('');
  expect(JSON.parse(shown.stdout)).toEqual(plain);
  const one = await svc('show', `${file}.gz`, '--execution', String(FIRST_ID));
  expect(one.code).toBe(0);
  expect(one.stdout).toMatch(/stärt/);

  // Cut short (a copy that stopped): refused, naming the file and why.
  const cut = join(archiveDir, 'cut.jsonl.gz');
  await writeFile(cut, packed.subarray(0, Math.floor(packed.length / 2)));
  const refused = await svc('show', cut);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/^svc archive: .*cut\.jsonl\.gz: the gzip file ends early, (after line \d+|before its first line) \(it was cut short\)\n$/);
}, 90_000);
