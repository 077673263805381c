import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialAad, seal } from '../../../src/crypto/seal.ts';
import { insertCredential } from '../../../src/db/credential.repo.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { http, type Json } from '../../helpers/http.ts';
import { leftBehind } from '../../helpers/left-behind.ts';
import { VALUES_QUERY, VALUES_ROW } from '../../helpers/sql-values.ts';

let t: TestApp;
let target: TestDatabase;
let adminUser: string;

beforeAll(async () => {
  t = await startTestApp();
  target = await createTestDatabase();
  adminUser = decodeURIComponent(new URL(t.databaseUrl).username);
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  await client.query(`CREATE SCHEMA reports; CREATE TABLE reports.sales (id int PRIMARY KEY, amount numeric NOT NULL);
                      INSERT INTO reports.sales VALUES (1, 10.5), (2, 20); CREATE TABLE public.notes (body text)`);
  await client.end();
  const u = new URL(target.url);
  const created = await http(t.url, 'POST', '/api/credentials', {
    name: 'target_db_auth',
    type: 'postgres',
    data: {
      db_host: u.hostname,
      db_port: Number(u.port),
      db_user: decodeURIComponent(u.username),
      db_password: decodeURIComponent(u.password),
      db_name: u.pathname.slice(1),
    },
  });
  expect(created.status).toBe(201);
  await http(t.url, 'POST', '/api/credentials', {
    name: 'target_plain_auth',
    type: 'postgres',
    data: { host: u.hostname, port: u.port, user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: u.pathname.slice(1) },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await target?.drop();
});

const execute = (body: Record<string, unknown>) => http(t.url, 'POST', '/api/postgres/execute', body);
const expectNoInternals = (body: Json) => {
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/\n\s+at /); // no stack frames
  expect(text).not.toContain(t.databaseUrl);
  // A database with trust authentication (SVC_TEST_DATABASE_URL) has no password to leak.
  const password = decodeURIComponent(new URL(target.url).password);
  if (password) expect(text).not.toContain(password);
};

describe('POST /api/postgres/execute on the service database', () => {
  it('runs a statement and returns {status: ok, result: rows}', async () => {
    const res = await execute({ query: 'SELECT 1 AS one, $$a$$ AS two' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', result: [{ one: 1, two: 'a' }] });
    expect((await execute({ query: 'SELECT count(*)::int AS n FROM core.execution' })).body).toEqual({ status: 'ok', result: [{ n: 0 }] });
  });

  it('runs as a per-database reader role without superuser rights', async () => {
    const who = await execute({ query: 'SELECT current_user AS u, session_user AS s, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user' });
    expect(who.status).toBe(200);
    const [row] = who.body.result;
    expect(row.u).toMatch(/^svc_sql_reader_[0-9a-f]{8}$/);
    expect(row.s).toBe(row.u);
    expect(row).toMatchObject({ rolsuper: false, rolcreaterole: false, rolcreatedb: false });

    const createRole = await execute({ query: 'CREATE ROLE svc_should_not_exist' });
    expect(createRole.status).toBe(400);
    expect(createRole.body.detail).toMatch(/permission denied/);
    expectNoInternals(createRole.body);
  });

  it('cannot climb back to the service user: SET ROLE, RESET ROLE and set_config are no way out', async () => {
    for (const query of [`SET ROLE ${pg.escapeIdentifier(adminUser)}`, `SELECT set_config('role', ${pg.escapeLiteral(adminUser)}, false)`, `SET SESSION AUTHORIZATION ${pg.escapeIdentifier(adminUser)}`]) {
      const res = await execute({ query });
      expect(res.status, query).toBe(400);
      expect(res.body.detail, query).toMatch(/permission denied/);
    }
    // RESET ROLE succeeds but lands on the reader itself (it is the session user).
    expect((await execute({ query: 'RESET ROLE' })).status).toBe(200);
    const after = await execute({ query: 'SELECT current_user AS u' });
    expect(after.body.result[0].u).toMatch(/^svc_sql_reader_/);
  });

  it('reads executions, commands without input and worker pools; no credential, keychain or other table; writes nothing in core', async () => {
    await http(t.url, 'POST', '/api/credentials', { name: 'reader_probe', type: 'bearer', data: { token: 'probe-token-value' } });
    for (const query of ['SELECT count(*) FROM core.execution', 'SELECT command_id, status, worker_id FROM core.command', 'SELECT * FROM core.runtime']) {
      expect((await execute({ query })).status, query).toBe(200);
    }
    // DESIGN.md (Security): the reader sees executions, commands without inputs and worker pools, nothing else.
    for (const query of [
      `SELECT name, type FROM core.credential WHERE name = 'reader_probe'`,
      'SELECT input FROM core.command',
      'SELECT snapshot FROM core.execution',
      'SELECT * FROM core.catalog',
      'SELECT * FROM core.event',
      'SELECT * FROM core.api_token',
      'SELECT * FROM core.idempotency_key',
      'SELECT * FROM core.execution_secret',
      'SELECT * FROM core.batch_request',
      'SELECT * FROM core.transient',
      'SELECT cache_key FROM core.keychain',
      'SELECT data_encrypted FROM core.credential',
      'SELECT * FROM core.credential',
      'SELECT data_encrypted FROM core.keychain',
      'SELECT renew_config FROM core.keychain',
      `DELETE FROM core.credential WHERE name = 'reader_probe'`,
      `UPDATE core.catalog SET kind = 'x'`,
      'CREATE TABLE core.evil (x int)',
      'DROP TABLE core.event',
    ]) {
      const res = await execute({ query });
      expect(res.status, query).toBe(400);
      expect(res.body.detail, query).toMatch(/permission denied|must be owner/);
    }
    expect((await http(t.url, 'GET', '/api/credentials/reader_probe')).status).toBe(200);
  });

  it('returns values as PostgreSQL has them: exact bigints and numerics, bytea in hex, dates and timestamps as their text', async () => {
    const res = await execute({ query: VALUES_QUERY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', result: [VALUES_ROW] });
  });

  it('creates no temporary table: the reader role has no TEMPORARY on the database', async () => {
    const res = await execute({ query: 'CREATE TEMP TABLE t (x int)' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^permission denied to create temporary tables in database/);
  });

  it('runs one statement per request', async () => {
    const res = await execute({ query: 'SELECT 1; SELECT 2' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('cannot insert multiple commands into a prepared statement');
  });

  it('leaves nothing behind: a large object, a NOTIFY and an advisory lock it takes go with its rolled-back transaction', async () => {
    const left = await leftBehind(t.databaseUrl, async (sql) => {
      const res = await execute({ query: sql });
      expect(res.status, sql).toBe(200);
    });
    expect(left).toEqual({ largeObjects: 0, heard: [], locks: 0 });
  });

  it('always sets statement_timeout (30 s by default) and enforces it', async () => {
    expect((await execute({ query: 'SHOW statement_timeout' })).body.result).toEqual([{ statement_timeout: '30s' }]);
    const started = Date.now();
    const res = await execute({ query: 'SELECT pg_sleep(5)', timeout_seconds: 0.5 });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('canceling statement due to statement timeout');
    expect(Date.now() - started).toBeLessThan(4000);
    // Raising it inside the statement does not disarm the timer already running.
    const raised = await execute({ query: `SELECT set_config('statement_timeout', '0', true), pg_sleep(3)`, timeout_seconds: 0.5 });
    expect(raised.status).toBe(400);
    expect(raised.body.detail).toBe('canceling statement due to statement timeout');
    expect((await execute({ query: 'SELECT 1', timeout_seconds: 31 })).status).toBe(422);
  });

  it('database errors are 400 with the database message; bad requests are 422', async () => {
    const res = await execute({ query: 'SELECT * FROM no_such_table' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'relation "no_such_table" does not exist' });
    const syntax = await execute({ query: 'SELEKT 1' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.detail).toMatch(/syntax error/);
    expectNoInternals(syntax.body);
    expect((await execute({ query: '' })).status).toBe(422);
    expect((await execute({ query: 'SELECT 1', schema: 'public; DROP TABLE x' })).status).toBe(422);
    expect((await execute({ query: 'SELECT 1', schema: '"quoted"' })).status).toBe(422);
  });

  it('answers 400 for rows over 8 MiB, not holding them: the statement ends there', async () => {
    const t0 = Date.now();
    // Endless without the limit (a set-returning function in the select list streams its rows).
    const endless = await execute({ query: "SELECT generate_series(1, 100000000) AS g, repeat('x', 1000) AS pad" });
    expect(endless.status).toBe(400);
    expect(endless.body.detail).toMatch(/^the statement's rows came to over 8 MiB, the most an answer holds/);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect((await execute({ query: 'SELECT count(*)::int AS n FROM generate_series(1, 1000)' })).body).toEqual({ status: 'ok', result: [{ n: 1000 }] });
  });

  it('recovers when the reader password was changed behind its back', async () => {
    const role = (await execute({ query: 'SELECT current_user AS u' })).body.result[0].u;
    await t.deps.db.query(`ALTER ROLE ${pg.escapeIdentifier(role)} PASSWORD 'something-else'`);
    expect((await execute({ query: 'SELECT 2 AS two' })).body).toEqual({ status: 'ok', result: [{ two: 2 }] });
  });
});

describe('POST /api/postgres/execute with credential_name', () => {
  it('runs against the credential database (db_-prefixed and plain field names)', async () => {
    const dbName = new URL(target.url).pathname.slice(1);
    for (const credential_name of ['target_db_auth', 'target_plain_auth']) {
      const res = await execute({ query: 'SELECT current_database() AS db', credential_name });
      expect(res.status, credential_name).toBe(200);
      expect(res.body).toEqual({ status: 'ok', result: [{ db: dbName }] });
    }
  });

  it('schema sets search_path', async () => {
    const res = await execute({ query: 'SELECT id, amount FROM sales ORDER BY id', schema: 'reports', credential_name: 'target_db_auth' });
    expect(res.body).toEqual({ status: 'ok', result: [{ id: 1, amount: 10.5 }, { id: 2, amount: 20 }] });
    const path = await execute({ query: 'SHOW search_path', schema: 'reports', credential_name: 'target_db_auth' });
    expect(path.body.result).toEqual([{ search_path: 'reports' }]);
    const without = await execute({ query: 'SELECT id FROM sales', credential_name: 'target_db_auth' });
    expect(without.status).toBe(400);
    expect(without.body.detail).toBe('relation "sales" does not exist');
  });

  it('commits writes; errors roll back', async () => {
    const ins = await execute({ query: `INSERT INTO notes VALUES ('hello') RETURNING body`, credential_name: 'target_db_auth' });
    expect(ins.body).toEqual({ status: 'ok', result: [{ body: 'hello' }] });
    expect((await execute({ query: `INSERT INTO notes VALUES (1/0)`, credential_name: 'target_db_auth' })).status).toBe(400);
    expect((await execute({ query: 'SELECT body FROM notes', credential_name: 'target_db_auth' })).body.result).toEqual([{ body: 'hello' }]);
  });

  it('returns values as PostgreSQL has them there too', async () => {
    // A database that prints dates and bytea otherwise by default: the statement's session does not.
    const admin = new pg.Client({ connectionString: target.url });
    await admin.connect();
    const db = pg.escapeIdentifier(new URL(target.url).pathname.slice(1));
    await admin.query(`ALTER DATABASE ${db} SET DateStyle = 'SQL, DMY'; ALTER DATABASE ${db} SET bytea_output = escape`);
    try {
      const res = await execute({ query: VALUES_QUERY, credential_name: 'target_db_auth' });
      expect(res.body).toEqual({ status: 'ok', result: [VALUES_ROW] });
    } finally {
      await admin.query(`ALTER DATABASE ${db} RESET DateStyle; ALTER DATABASE ${db} RESET bytea_output`);
      await admin.end();
    }
  });

  it('statement_timeout applies on credential databases too', async () => {
    const res = await execute({ query: 'SELECT pg_sleep(5)', credential_name: 'target_db_auth', timeout_seconds: 0.3 });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('canceling statement due to statement timeout');
  });

  it('unknown credential 404, non-postgres credential 400, unusable credential 400 without its password', async () => {
    const missing = await execute({ query: 'SELECT 1', credential_name: 'nope_auth' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: "credential 'nope_auth' not found" });

    await http(t.url, 'POST', '/api/credentials', { name: 'a_bearer_auth', type: 'bearer', data: { token: 'x' } });
    const wrongType = await execute({ query: 'SELECT 1', credential_name: 'a_bearer_auth' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toEqual({ detail: "credential 'a_bearer_auth' has type 'bearer'; SQL execution needs a postgres credential" });

    // The API refuses a postgres credential without a host; one stored before the types were checked still reaches execute.
    const refused = await http(t.url, 'POST', '/api/credentials', { name: 'hostless_auth', type: 'postgres', data: { user: 'u', password: 'p' } });
    expect(refused.status).toBe(400);
    expect(refused.body.detail.errors).toEqual(['Missing required field: host (or one of db_host, connection_string, url, dsn)']);
    const sealed = seal(t.deps.keyring, { user: 'u', password: 'p' }, credentialAad('hostless_auth'));
    await insertCredential(t.deps.db, { name: 'hostless_auth', type: 'postgres', dataEncrypted: sealed, schema: null, meta: null, tags: [], description: null });
    const hostless = await execute({ query: 'SELECT 1', credential_name: 'hostless_auth' });
    expect(hostless.status).toBe(400);
    expect(hostless.body).toEqual({ detail: "postgres credential 'hostless_auth' has neither host nor connection_string" });

    const u = new URL(target.url);
    await http(t.url, 'POST', '/api/credentials', {
      name: 'wrong_pw_auth',
      type: 'postgres',
      data: { host: u.hostname, port: Number(u.port), user: 'nobody_here', password: 'wrong-pw-value-123', database: 'postgres' },
    });
    const wrong = await execute({ query: 'SELECT 1', credential_name: 'wrong_pw_auth' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toMatch(/password authentication failed|nobody_here/);
    expect(JSON.stringify(wrong.body)).not.toContain('wrong-pw-value-123');
  });
});
