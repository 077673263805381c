// A migration that rewrites a large table runs for minutes, and `svc migrate` (or a server's
// start) said nothing until it was over: `applied …` at the end, the log silent meanwhile, so an
// upgrade read as a hang. A migration still running now says so every 5 s, in the log
// (`svc migrate`: stderr, its stdout staying the answer).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { createLogger } from '../../../src/log.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'svc-slow-migration-'));
  // As slow as a large table's rewrite, for the test's purpose: a little over one report's interval.
  await writeFile(join(dir, '0001_slow.sql'), 'SELECT pg_sleep(6);\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.drop();
});

it('a migration that runs for seconds says it still runs', async () => {
  const lines: string[] = [];
  const log = createLogger('info', new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) }));
  const db = new Db(t.url, 2);
  try {
    const result = await migrate(db, dir, { log });
    expect(result.applied).toEqual(['0001_slow.sql']);
  } finally {
    await db.close();
  }
  const said = lines.map((l) => JSON.parse(l)).filter((l) => l.migration === '0001_slow.sql');
  expect(said.map((l) => l.msg)).toEqual(['migration 0001_slow.sql still running after 5 s']);
  expect(said[0].running_s).toBe(5);
});
