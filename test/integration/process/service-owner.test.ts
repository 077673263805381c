// On the embedded default the service connects as its own owner role (`svc`), not as the
// PostgreSQL superuser: on a fresh data dir, and on one an earlier version made (everything owned
// by the superuser, the reader role made by it), whose ownership moves to the owner once.
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { Db } from '../../../src/db/db.ts';
import { startEmbedded } from '../../../src/db/embedded.ts';
import { migrate, MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { createLogger } from '../../../src/log.ts';
import { startService, type RunningService } from '../../../src/service.ts';
import { createTestDatabase } from '../../helpers/database.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-owner-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach the directory
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const quiet = createLogger('error');
const start = (dataDir: string, env: Record<string, string> = {}) =>
  startService(loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'error', ...env }), { log: quiet });

/** Who the service's own pool is, and whether it is a superuser. */
async function serviceUser(svc: RunningService): Promise<{ user: string; rolsuper: boolean }> {
  const { rows } = await svc.deps.db.query<{ user: string; rolsuper: boolean }>('SELECT current_user AS user, rolsuper FROM pg_roles WHERE rolname = current_user');
  return rows[0];
}

/** One statement as the reader role the in-process workers get. */
async function asReader(svc: RunningService, sql: string): Promise<pg.QueryResult> {
  const url = await svc.readerDatabaseUrl();
  expect(url).toBeDefined();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

describe('the embedded default runs the service as a non-superuser owner', () => {
  it('on a fresh data dir: current_user is svc, no superuser; it owns core; the reader reads executions only', async () => {
    const svc = await start(join(dir, 'fresh'));
    try {
      expect(await serviceUser(svc)).toEqual({ user: 'svc', rolsuper: false });
      expect(new URL(svc.databaseUrl).username).toBe('svc');
      const owners = await svc.deps.db.query<{ nspname: string; owner: string }>(
        `SELECT nspname, pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname IN ('core', 'pgboss') ORDER BY 1`,
      );
      expect(owners.rows).toEqual([{ nspname: 'core', owner: 'svc' }]);
      expect((await asReader(svc, 'SELECT count(*)::int AS n FROM core.execution')).rows).toEqual([{ n: 0 }]);
      await expect(asReader(svc, 'SELECT * FROM core.api_token')).rejects.toThrow(/permission denied/);
      // Migration 0036: TEMPORARY is the owner's, not the reader's (nor PUBLIC's).
      await expect(asReader(svc, 'CREATE TEMP TABLE t (x int)')).rejects.toThrow(/permission denied to create temporary tables/);
      await svc.deps.db.query('CREATE TEMP TABLE owner_temp_probe (x int) ON COMMIT DROP');
    } finally {
      await svc.stop();
    }
  });

  it('on a data dir an earlier version made (all of it the superuser\'s): ownership moves to svc once, data and reader kept', async () => {
    const dataDir = join(dir, 'earlier');
    const key = randomBytes(32).toString('base64');
    // The earlier scheme: the service connected as the superuser, so it made and owns everything.
    // Its migrations ended before 0014, and its job queue (pg-boss) kept its tables in schema pgboss.
    const earlierMigrations = join(dir, 'migrations-earlier');
    await mkdir(earlierMigrations);
    for (const f of await readdir(MIGRATIONS_DIR)) if (f < '0014') await copyFile(join(MIGRATIONS_DIR, f), join(earlierMigrations, f));
    const pgServer = await startEmbedded(dataDir);
    try {
      const db = new Db(pgServer.url, 2);
      try {
        await migrate(db, earlierMigrations);
        await db.query(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('old/kept', 1, 'x', '{}')`);
        await db.query(`CREATE SCHEMA pgboss; CREATE TABLE pgboss.job (id uuid PRIMARY KEY)`);
      } finally {
        await db.close();
      }
      const su = new pg.Client({ connectionString: pgServer.url });
      await su.connect();
      const before = await su.query(`SELECT pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = 'core'`);
      await su.end();
      expect(before.rows[0].owner).toBe('postgres');
    } finally {
      await pgServer.stop();
    }

    const svc = await start(dataDir, { SVC_ENCRYPTION_KEY: key });
    try {
      expect(await serviceUser(svc)).toEqual({ user: 'svc', rolsuper: false });
      expect((await svc.deps.db.query(`SELECT path FROM core.catalog WHERE path = 'old/kept'`)).rows).toEqual([{ path: 'old/kept' }]);
      const notOwned = await svc.deps.db.query(
        `SELECT c.oid::regclass::text AS rel FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname IN ('core', 'pgboss') AND pg_get_userbyid(c.relowner) <> 'svc'`,
      );
      expect(notOwned.rows).toEqual([]);
      // The job queue's schema moved to svc, and migration 0014 (run as svc) dropped it.
      expect((await svc.deps.db.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss'`)).rows).toEqual([]);
      // The owner gives the superuser-made reader its login, and the reader reads as narrowed.
      expect((await asReader(svc, 'SELECT count(*)::int AS n FROM core.execution')).rows).toEqual([{ n: 0 }]);
      await expect(asReader(svc, 'SELECT * FROM core.catalog')).rejects.toThrow(/permission denied/);
      await expect(asReader(svc, 'CREATE TEMP TABLE t (x int)')).rejects.toThrow(/permission denied to create temporary tables/);
      await svc.deps.db.query('CREATE TEMP TABLE owner_temp_probe (x int) ON COMMIT DROP');
    } finally {
      await svc.stop();
    }
    // And again: nothing left to move, the same owner.
    const again = await start(dataDir, { SVC_ENCRYPTION_KEY: key });
    try {
      expect(await serviceUser(again)).toEqual({ user: 'svc', rolsuper: false });
    } finally {
      await again.stop();
    }
  });
});

describe('a server whose SVC_DATABASE_URL is a superuser', () => {
  it('warns at start, naming the fix', async () => {
    const t = await createTestDatabase();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    try {
      const config = loadConfig({ SVC_DATABASE_URL: t.url, SVC_WORKER_TOKEN: randomBytes(32).toString('base64'), SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_PORT: '0', SVC_HOST: '127.0.0.1' });
      const svc = await startService(config, { log: createLogger('info', sink) });
      try {
        expect(svc.databaseSuperuser).toBe(true);
        expect(lines.join('')).toMatch(/connects to PostgreSQL as a superuser.*docs\/operations\.md/);
      } finally {
        await svc.stop();
      }
    } finally {
      await t.drop();
    }
  });
});
