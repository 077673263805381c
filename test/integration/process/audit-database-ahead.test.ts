// A server or `svc migrate` of an older version on a database a newer version has migrated (a
// rollback, an old server restarted mid rolling upgrade): it has nothing to apply, and said
// `database is up to date (<its own newest migration>)`, naming a schema older than the
// database's, and a server started without a word. Seen with the version of 220 commits before
// this one on a database migrated to 0053: `database is up to date (0049_paused_before_0047.sql)`.
// Now both name the migrations this version does not know.
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { freePort } from '../../helpers/ports.ts';
import { runSvc, spawnSvc, waitForHealth, withTimeout } from '../../helpers/process.ts';

let t: TestDatabase;
let env: Record<string, string>;
const NEWER = '9000_from_a_newer_version.sql';
beforeAll(async () => {
  t = await createTestDatabase();
  env = { SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
});
afterAll(async () => {
  await t?.drop();
});

it('svc migrate and a start name the migrations of a newer version instead of calling the database up to date', async () => {
  const first = await runSvc(['migrate', '--json'], env);
  expect(first.code, first.stderr).toBe(0);
  const newest = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort().at(-1);
  // As a newer version leaves it: one more migration recorded than this version has.
  const c = new pg.Client({ connectionString: t.url });
  await c.connect();
  await c.query('INSERT INTO core.schema_migration (version) VALUES ($1)', [NEWER]);
  // A migration this service took back (its file removed) names no newer version: not counted.
  await c.query(`INSERT INTO core.schema_migration (version) VALUES ('0030_batch_reserved_ids.sql')`);
  await c.end();

  const text = await runSvc(['migrate'], env);
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout).not.toContain('up to date');
  expect(text.stdout).toContain(`the database is ahead of this version: it has 1 migration this version does not know (${NEWER})`);
  expect(text.stdout).toContain(`this version's newest is ${newest}`);

  const json = await runSvc(['migrate', '--json'], env);
  expect(json.code, json.stderr).toBe(0);
  expect(JSON.parse(json.stdout)).toEqual({ applied: [], current: newest, ahead: [NEWER] });

  const port = await freePort();
  const p = spawnSvc(['server'], { ...env, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
  try {
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, 60_000);
  } finally {
    p.kill('SIGTERM');
    await withTimeout(p.exited, 20_000, 'server stop');
  }
  const warned = p.output().split('\n').filter((l) => l.includes('"ahead":')).map((l) => JSON.parse(l) as { level: number; ahead: string[]; msg: string });
  expect(warned).toEqual([expect.objectContaining({ level: 40, ahead: [NEWER] })]);
  expect(warned[0]!.msg).toContain(`the database is ahead of this version: it has 1 migration this version does not know (${NEWER})`);
}, 180_000);
