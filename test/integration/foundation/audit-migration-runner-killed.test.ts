// A migration runner killed mid-migration (svc migrate stopped with Ctrl-C or kill -9, a server
// killed by its supervisor while its start migrates) left its statement running in PostgreSQL,
// which notices a client gone only when it next writes to it: the migration's table locks and the
// migration lock stayed held until the statement ended, however long it had left (0023 on a log
// of a million events: 13 s after the kill, every server's event writes waiting), and then it
// rolled back anyway. The runner's session now asks PostgreSQL to check for its client every
// second (client_connection_check_interval), so the statement ends and its locks go at once.
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { MIGRATIONS_DIR, migrate } from '../../../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

const MIGRATION_LOCK_KEY = 7_242_001;
let t: TestDatabase;
let withSlow: string;
beforeAll(async () => {
  t = await createTestDatabase();
  const db = new Db(t.url, 2);
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  // Every migration, and one more that holds a table the service uses for a minute, as a
  // migration rewriting a large table does.
  withSlow = await mkdtemp(join(tmpdir(), 'svc-migration-killed-'));
  for (const f of await readdir(MIGRATIONS_DIR)) if (f.endsWith('.sql')) await copyFile(join(MIGRATIONS_DIR, f), join(withSlow, f));
  await writeFile(join(withSlow, '9999_test_slow.sql'), 'LOCK TABLE core.catalog IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);');
}, 120_000);
afterAll(async () => {
  await t?.drop();
  if (withSlow) await rm(withSlow, { recursive: true, force: true });
});

it('a runner killed during a migration lets go of its locks at once, and nothing of the migration stays', async () => {
  const runner = spawn(
    NODE24,
    [
      '--input-type=module',
      '-e',
      `import { Db } from '${ROOT}src/db/db.ts'; import { migrate } from '${ROOT}src/db/migrate.ts';
       await migrate(new Db(process.env.URL, 2), process.env.DIR);`,
    ],
    { env: { PATH: process.env.PATH ?? '', URL: t.url, DIR: withSlow }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  runner.stderr!.on('data', (c) => (stderr += String(c)));
  const exited = new Promise((r) => runner.on('exit', r));
  const c = new pg.Client({ connectionString: t.url });
  await c.connect();
  try {
    const sleeping = async () =>
      Number((await c.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep(60)%' AND state = 'active' AND pid <> pg_backend_pid()`)).rows[0].n);
    await until(`the slow migration running (${stderr})`, async () => (await sleeping()) === 1, 30_000);
    runner.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    // Its statement ends, and with it its locks: the table reads again, the migration lock is free.
    await until('the killed runner\'s statement ended', async () => (await sleeping()) === 0, 10_000);
    await c.query(`SET statement_timeout = 5000`);
    await c.query('SELECT count(*) FROM core.catalog');
    // This database's: other test files migrate their own databases on the same cluster meanwhile.
    const held = await c.query(
      `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [MIGRATION_LOCK_KEY],
    );
    expect(Number(held.rows[0].n)).toBe(0);
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    const applied = await c.query(`SELECT count(*) AS n FROM core.schema_migration WHERE version = '9999_test_slow.sql'`);
    expect(Number(applied.rows[0].n)).toBe(0);
  } finally {
    await c.end();
  }
  // Nothing of it stayed: a run without the slow migration finds its database as it was.
  const db = new Db(t.url, 2);
  try {
    expect((await migrate(db)).applied).toEqual([]);
  } finally {
    await db.close();
  }
}, 120_000);
