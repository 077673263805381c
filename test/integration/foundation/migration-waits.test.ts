import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { MIGRATIONS_DIR, migrate } from '../../../src/db/migrate.ts';
import { createLogger } from '../../../src/log.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

// A migration's lock waits had no bound and said nothing: its DDL queued behind another
// session's open transaction (an operator's psql left idle, a stuck server) held up every
// statement on that table behind it, for as long as that transaction stayed open, and a second
// server waited silently on the migration lock of a process stopped between two migrations. Now
// a migration lets go of a table's lock wait after its lock timeout (the table's other work goes
// on), says which transactions are in the way and tries again; past its wait, the start fails
// naming them. The migration lock's wait says who holds it, and fails when the holder runs nothing.

const LOCK_TIMEOUT_MS = 300;
const WAIT_MS = 1_500;
const MIGRATION_LOCK_KEY = 7_242_001;

let t: TestDatabase;
let withExtra: string;
beforeAll(async () => {
  t = await createTestDatabase();
  const db = new Db(t.url, 2);
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  // Every migration, and one more that alters a table the service uses.
  withExtra = await mkdtemp(join(tmpdir(), 'svc-migration-waits-'));
  for (const f of await readdir(MIGRATIONS_DIR)) if (f.endsWith('.sql')) await copyFile(join(MIGRATIONS_DIR, f), join(withExtra, f));
  await writeFile(join(withExtra, '9999_test_alter_catalog.sql'), 'ALTER TABLE core.catalog ADD COLUMN test_note text;');
}, 120_000);
afterAll(async () => {
  await t?.drop();
  if (withExtra) await rm(withExtra, { recursive: true, force: true });
});

/** A session of its own, as an operator's psql would be, and its backend's pid. */
async function session(): Promise<pg.Client & { pid: number }> {
  const c = new pg.Client({ connectionString: t.url, application_name: 'operator-psql' });
  await c.connect();
  const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return Object.assign(c, { pid: rows[0].pid });
}

function capturedLog(): { log: ReturnType<typeof createLogger>; lines: () => string } {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { log: createLogger('info', out), lines: () => chunks.join('') };
}

it("a migration behind another session's open transaction lets the table's work go on, says who is in the way, and fails past its wait; then applies", async () => {
  const operator = await session();
  const db = new Db(t.url, 4);
  try {
    await operator.query('BEGIN');
    await operator.query('SELECT count(*) FROM core.catalog'); // an ACCESS SHARE lock, held while idle
    const { log, lines } = capturedLog();
    const migrating = migrate(db, withExtra, { log, lockTimeoutMs: LOCK_TIMEOUT_MS, waitMs: WAIT_MS }).then(
      () => 'applied',
      (err: unknown) => err,
    );
    // Meanwhile the service's reads of the table do not queue behind the migration for long.
    const reads: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await db.query('SELECT count(*) FROM core.catalog');
      reads.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Math.max(...reads)).toBeLessThan(WAIT_MS);
    const failed = await migrating;
    expect(failed).toBeInstanceOf(Error);
    const message = (failed as Error).message;
    expect(message).toMatch(/migration 9999_test_alter_catalog\.sql could not take its tables' locks in \d+ s/);
    expect(message).toContain(`pid ${operator.pid}`);
    // Its client address too, over TCP (none over a Unix socket).
    expect(message).toMatch(/\(operator-psql, (127\.0\.0\.1, |::1, )?idle in transaction for \d+ s, its transaction open \d+ s\)/);
    expect(lines()).toContain("waited 0.3 s for a table's lock and let go");
    expect((await db.query(`SELECT count(*)::int AS n FROM core.schema_migration WHERE version = '9999_test_alter_catalog.sql'`)).rows[0].n).toBe(0);

    await operator.query('COMMIT');
    expect((await migrate(db, withExtra, { lockTimeoutMs: LOCK_TIMEOUT_MS, waitMs: WAIT_MS })).applied).toEqual(['9999_test_alter_catalog.sql']);
    // The session's lock timeout went back to the default with the connection.
    expect((await db.query<{ v: string }>(`SELECT current_setting('lock_timeout') AS v`)).rows[0].v).toBe('0');
  } finally {
    await operator.end();
    await db.close();
  }
});

it('waits on the migration lock while its holder works, saying who; fails once the holder has run nothing for the wait', async () => {
  const holder = await session();
  const db = new Db(t.url, 2);
  try {
    // Working: the holder runs a statement for longer than the wait; the runner waits it out.
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const working = holder.query('SELECT pg_sleep(2.5)').then(() => holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]));
    const { log, lines } = capturedLog();
    const t0 = performance.now();
    expect((await migrate(db, MIGRATIONS_DIR, { log, lockTimeoutMs: LOCK_TIMEOUT_MS, waitMs: WAIT_MS })).applied).toEqual([]);
    expect(performance.now() - t0).toBeGreaterThan(2_000);
    await working;
    expect(lines()).toContain(`waiting for another process's migrations: pid ${holder.pid} (operator-psql`);

    // Stopped between two migrations: it holds the lock with its idle session.
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await new Promise((r) => setTimeout(r, WAIT_MS + 500));
    const err = await migrate(db, MIGRATIONS_DIR, { lockTimeoutMs: LOCK_TIMEOUT_MS, waitMs: WAIT_MS }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(new RegExp(`another process holds the migration lock and has run nothing for \\d+ s: pid ${holder.pid} \\(operator-psql`));
  } finally {
    await holder.end();
    await db.close();
  }
});
