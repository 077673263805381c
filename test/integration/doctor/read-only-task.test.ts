// What the doctor's detection stands on: a postgres task marked `read_only` reads the service
// database and cannot change it (the reader role, a read-only session, one statement), and
// /api/health says whether the server's bus still listens.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readerPassword } from '../../../src/api/postgres.ts';
import { createKeyring } from '../../../src/crypto/keyring.ts';
import { serviceReaderUrl } from '../../../src/db/sql-execute.ts';
import { postgres } from '../../../src/worker/tools/postgres.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { LEFT_BEHIND_PROBES, leftBehind } from '../../helpers/left-behind.ts';

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
let readerUrl: string;
let password: string;
const POOL = 'read-only-test-pool';

beforeAll(async () => {
  t = await createMigratedDatabase();
  password = readerPassword(createKeyring(randomBytes(32), []));
  readerUrl = await serviceReaderUrl(t.db, password);
  await t.db.query(`INSERT INTO core.runtime (kind, name, status, heartbeat_at) VALUES ('worker_pool', $1, 'ready', now())`, [POOL]);
});
afterAll(async () => t?.drop());

const ctx = (extra: Partial<ToolContext>): ToolContext => ({ signal: new AbortController().signal, env: {}, ...extra });
const task = (command: string, extra: Record<string, unknown> = {}) => ({ name: 'q', kind: 'postgres', read_only: true, command, ...extra });
const poolStatus = async () => (await t.db.query<{ status: string }>(`SELECT status FROM core.runtime WHERE name = $1`, [POOL])).rows[0]?.status;

describe('a read_only postgres task without auth, on a worker given the reader role', () => {
  it('reads the orchestration tables with bind params', async () => {
    const out = await postgres(task('SELECT count(*)::int AS n FROM core.runtime WHERE name = $1', { params: [POOL] }), ctx({ serviceReaderUrl: readerUrl }));
    expect(out).toMatchObject({ status: 'ok', data: { rows: [{ n: 1 }] } });
  });

  it('cannot write, read secret columns, or slip a second statement in', async () => {
    for (const sql of [
      `UPDATE core.runtime SET status = 'stopped' WHERE name = '${POOL}'`,
      `WITH d AS (DELETE FROM core.runtime RETURNING 1) SELECT count(*) FROM d`,
      `SELECT 1; UPDATE core.runtime SET status = 'stopped'`,
      `SELECT data_encrypted FROM core.credential`,
    ]) {
      const out = await postgres(task(sql), ctx({ serviceReaderUrl: readerUrl }));
      expect(out.status, sql).toBe('error');
    }
    expect(await poolStatus()).toBe('ready');
  });

  it('leaves nothing behind: a large object, a NOTIFY and an advisory lock go with its rolled-back transaction', async () => {
    const left = await leftBehind(t.url, async (sql) => {
      const out = await postgres(task(sql), ctx({ serviceReaderUrl: readerUrl }));
      // PostgreSQL 18 refuses a large object in a read-only transaction (25006); 15 makes one.
      if (sql !== LEFT_BEHIND_PROBES.largeObject) expect(out, sql).toMatchObject({ status: 'ok' });
    });
    expect(left).toEqual({ largeObjects: 0, heard: [], locks: 0 });
  });

  it('never shows the reader password in an error', async () => {
    const unreachable = new URL(readerUrl);
    unreachable.port = '1';
    const out = await postgres(task('SELECT 1'), ctx({ serviceReaderUrl: unreachable.toString() }));
    expect(out.status).toBe('error');
    expect(JSON.stringify(out)).not.toContain(password);
  });

  it('a task that is not read_only does not get the reader role: it still needs auth', async () => {
    const out = await postgres({ name: 'q', kind: 'postgres', command: 'SELECT 1' }, ctx({ serviceReaderUrl: readerUrl }));
    expect(out).toMatchObject({ status: 'error', error: { code: 'no_connection' } });
  });
});

describe('a read_only postgres task on a worker given the service user (SVC_ALLOW_SERVICE_DB_TASKS workers)', () => {
  // The service user is often a superuser: a read_only task never runs as it, only as the reader
  // (a `svc worker` asks the server for the reader's login, test/integration/tools/service-reader.test.ts).
  it('is refused without the reader role: it never runs as the service user', async () => {
    const out = await postgres(task('SELECT count(*)::int AS n FROM core.runtime'), ctx({ serviceDatabaseUrl: t.url }));
    expect(out).toMatchObject({ status: 'error', error: { code: 'no_connection' } });
    for (const sql of [`UPDATE core.runtime SET status = 'stopped' WHERE name = '${POOL}'`, `SET default_transaction_read_only = off; COMMIT; UPDATE core.runtime SET status = 'stopped'`]) {
      const out = await postgres(task(sql), ctx({ serviceDatabaseUrl: t.url }));
      expect(out.status, sql).toBe('error');
    }
    expect(await poolStatus()).toBe('ready');
  });

  it('with the reader role beside it, reads as the reader', async () => {
    const out = await postgres(task('SELECT current_user AS u'), ctx({ serviceDatabaseUrl: t.url, serviceReaderUrl: readerUrl }));
    expect(out).toMatchObject({ status: 'ok', data: { rows: [{ u: expect.stringMatching(/^svc_sql_reader_/) }] } });
  });

  it('without any way to the service database: a clear no_connection error', async () => {
    const out = await postgres(task('SELECT 1'), ctx({}));
    expect(out).toMatchObject({ status: 'error', error: { code: 'no_connection' } });
    expect(out.error?.message).toMatch(/read_only postgres task without auth needs a worker that can read the service database/);
  });
});

describe('GET /api/health reports the bus', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('ok while the LISTEN connection is up; degraded (still 200) while it is cut and cannot come back; ok once it can', async () => {
    expect(await http(app.url, 'GET', '/api/health')).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok', bus: 'ok' } });
    // The bus reconnects by itself: new sessions are refused first (even a superuser's), so it
    // stays down; the pool's open connections keep the health ping answering.
    const [{ name }] = (await app.deps.db.query<{ name: string }>('SELECT current_database() AS name')).rows;
    // A few open connections, so a ping that times out on a loaded machine (its connection is
    // discarded) leaves others to answer the next one: once new sessions are refused, only these can.
    await Promise.all(Array.from({ length: 4 }, () => app.deps.db.query('SELECT pg_sleep(0.05)')));
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    try {
      const cut = await app.deps.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`);
      expect(cut.rowCount).toBeGreaterThanOrEqual(1);
      const health = await until('health reports the bus down', async () => {
        const r = await http(app.url, 'GET', '/api/health');
        return r.body.bus === 'disconnected' && r.body.database === 'ok' ? r : undefined;
      }, 15_000);
      expect(health).toMatchObject({ status: 200, body: { status: 'degraded', database: 'ok', bus: 'disconnected' } });
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    await until('health reports the bus back', async () => (await http(app.url, 'GET', '/api/health')).body.bus === 'ok', 15_000);
  });
});
