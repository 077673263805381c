import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSqlCommand } from '../../../src/dsl/render.ts';
import { postgres } from '../../../src/worker/tools/postgres.ts';
import type { ResolvedCredential } from '../../../src/protocol.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { VALUES_QUERY, VALUES_ROW } from '../../helpers/sql-values.ts';

let database: TestDatabase;
// Every test works in its own schema of this file's own database.
const schema = `tools_pg_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  database = await createTestDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.users (id int PRIMARY KEY, name text NOT NULL)`);
  await client.end();
});
afterAll(async () => database?.drop());

const urlCredential = (): ResolvedCredential => ({ name: 'db_auth', type: 'postgres', data: { connection_string: database.url } });
// The same database described field by field, with the db_-prefixed names.
function prefixedCredential(overrides: Record<string, unknown> = {}): ResolvedCredential {
  const url = new URL(database.url);
  return {
    name: 'db_prefixed_auth',
    type: 'postgres',
    data: {
      db_host: url.hostname,
      db_port: url.port || '5432',
      db_user: decodeURIComponent(url.username),
      db_password: decodeURIComponent(url.password),
      db_name: url.pathname.slice(1),
      ...overrides,
    },
  };
}
const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ signal: new AbortController().signal, env: {}, credential: urlCredential(), ...extra });
const task = (fields: Record<string, unknown>) => ({ name: 't', kind: 'postgres', ...fields });

describe('postgres tool', () => {
  it('inserts with bind params and selects them back', async () => {
    const insert = await postgres(task({ command: `INSERT INTO ${schema}.users(id, name) VALUES ($1, $2), ($3, $4)`, params: [1, 'ann', '2', "bo'b"] }), ctx());
    expect(insert).toEqual({ status: 'ok', data: { rows: [], row_count: 2, command: 'INSERT' } });

    const select = await postgres(task({ command: `SELECT id, name FROM ${schema}.users WHERE id >= $1 ORDER BY id`, params: [1] }), ctx());
    expect(select).toEqual({ status: 'ok', data: { rows: [{ id: 1, name: 'ann' }, { id: 2, name: "bo'b" }], row_count: 2, command: 'SELECT' } });
  });

  it('connects with a credential that uses db_-prefixed field names', async () => {
    const outcome = await postgres(task({ command: 'SELECT current_database() AS db, 1 + $1::int AS two', params: [1] }), ctx({ credential: prefixedCredential() }));
    expect(outcome).toMatchObject({ status: 'ok', data: { rows: [{ db: new URL(database.url).pathname.slice(1), two: 2 }], row_count: 1 } });
  });

  it('reports the last statement of a multi-statement command', async () => {
    const outcome = await postgres(task({ command: `SET LOCAL statement_timeout = 1000; SELECT count(*)::int AS n FROM ${schema}.users` }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { command: 'SELECT', rows: [{ n: expect.any(Number) }] } });
  });

  it('returns values as PostgreSQL has them, whatever the database prints dates and bytea as', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const db = pg.escapeIdentifier(new URL(database.url).pathname.slice(1));
    await admin.query(`ALTER DATABASE ${db} SET DateStyle = 'SQL, DMY'; ALTER DATABASE ${db} SET bytea_output = escape`);
    try {
      for (const credential of [urlCredential(), prefixedCredential()]) {
        for (const readOnly of [false, true]) {
          // As the worker reports it: JSON (a timestamptz is a Date until then).
          const outcome: unknown = JSON.parse(JSON.stringify(await postgres(task({ command: VALUES_QUERY, read_only: readOnly }), ctx({ credential }))));
          expect(outcome, `${credential.name}, read_only ${readOnly}`).toEqual({ status: 'ok', data: { rows: [VALUES_ROW], row_count: 1, command: 'SELECT' } });
        }
      }
    } finally {
      await admin.query(`ALTER DATABASE ${db} RESET DateStyle; ALTER DATABASE ${db} RESET bytea_output`);
      await admin.end();
    }
  });

  it('returns the database message and SQLSTATE for a SQL error', async () => {
    const missing = await postgres(task({ command: `SELECT * FROM ${schema}.nope` }), ctx());
    expect(missing).toEqual({
      status: 'error',
      data: { sqlstate: '42P01' },
      error: { code: 'sql_error', message: `relation "${schema}.nope" does not exist (SQLSTATE 42P01)` },
    });
    const duplicate = await postgres(task({ command: `INSERT INTO ${schema}.users(id, name) VALUES (1, 'again')` }), ctx());
    expect(duplicate).toMatchObject({ status: 'error', data: { sqlstate: '23505' }, error: { code: 'sql_error' } });
  });

  it('uses the service database only when the worker allows it, else needs a credential', async () => {
    const none = await postgres(task({ command: 'SELECT 1' }), ctx({ credential: undefined }));
    expect(none).toMatchObject({ status: 'error', data: null, error: { code: 'no_connection', message: expect.stringMatching(/^a postgres task without auth needs a credential \(auth: NAME\), or read_only: true/) } });
    const service = await postgres(task({ command: 'SELECT 1 AS one' }), ctx({ credential: undefined, serviceDatabaseUrl: database.url }));
    expect(service).toMatchObject({ status: 'ok', data: { rows: [{ one: 1 }] } });
  });

  it('stops a long statement at timeout_seconds on the server', async () => {
    const started = Date.now();
    const outcome = await postgres(task({ command: 'SELECT pg_sleep(10)', timeout_seconds: 0.3 }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('returns at once on abort and cancels the running statement', async () => {
    const tag = `svc_abort_${randomBytes(4).toString('hex')}`;
    const started = Date.now();
    const outcome = await postgres(task({ command: `SELECT pg_sleep(20) /* ${tag} */` }), ctx({ signal: AbortSignal.timeout(300) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout', message: 'task timed out' } });
    expect(Date.now() - started).toBeLessThan(2000);
    // The backend stops working on it shortly after: the cancel request is sent in the background.
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    try {
      let active = 1;
      for (let i = 0; i < 40 && active > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const result = await observer.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
          [`%${tag}%`],
        );
        active = result.rows[0].n;
      }
      expect(active).toBe(0);
    } finally {
      await observer.end();
    }
  });

  it('cancels a statement whose rows come to more than 8 MiB (response_too_large); one under it is read whole', async () => {
    // Endless without the limit (a set-returning function in the select list streams its rows): all would be held.
    const endless = await postgres(task({ command: `SELECT generate_series(1, 100000000) AS g, repeat('x', 1000) AS pad`, timeout_seconds: 60 }), ctx());
    expect(endless).toMatchObject({ status: 'error', error: { code: 'response_too_large', message: expect.stringMatching(/over 8 MiB.*cancelled/) } });
    // A write's RETURNING rows come once it has run: too many fail the task, and it says its changes stand.
    const write = await postgres(task({ command: `INSERT INTO ${schema}.users(id, name) SELECT g, repeat('y', 1000) FROM generate_series(1000, 20000) AS g RETURNING *` }), ctx());
    expect(write).toMatchObject({ status: 'error', error: { code: 'response_too_large', message: expect.stringMatching(/what it changed stands/) } });
    const under = await postgres(task({ command: `SELECT g FROM generate_series(1, 100000) AS g` }), ctx());
    expect(under).toMatchObject({ status: 'ok', data: { row_count: 100000 } });
  });

  it('reports an unreachable database as a connection error', async () => {
    const outcome = await postgres(task({ command: 'SELECT 1' }), ctx({ credential: prefixedCredential({ db_host: '127.0.0.1', db_port: 9 }) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
    expect(outcome.error?.message).toContain("cannot connect to credential 'db_prefixed_auth'");
  });

  it('rejects bad fields and credentials without throwing', async () => {
    expect(await postgres(task({ command: '' }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
    expect(await postgres(task({ command: 'SELECT 1', params: 'x' }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
    const noHost = await postgres(task({ command: 'SELECT 1' }), ctx({ credential: { name: 'x_auth', type: 'postgres', data: { user: 'u' } } }));
    expect(noHost).toMatchObject({ error: { code: 'invalid_credential' } });
  });
});

describe('a template in the command', () => {
  // What an attacker's payload would hold: each tries to end the literal it lands in and run SQL.
  const hostile = [
    "x'; DROP TABLE __schema__.users; --",
    "\\'; DROP TABLE __schema__.users; --",
    '"; DROP TABLE __schema__.users; --',
    "it's",
    '\\',
    'a\nb',
    '$$; DROP TABLE __schema__.users; $$',
    '-1',
    '{{ 7 * 7 }}',
    '',
  ].map((v) => v.replaceAll('__schema__', schema));
  // As the worker renders a postgres task's command (src/worker/run-command.ts), then runs it.
  const render = (template: string, v: unknown) => renderSqlCommand(template, { v }, 'start.t.command');

  it('is written as a literal wherever it stands, so every value comes back as it is and runs nothing', async () => {
    // The database's default makes a backslash in '' an escape: the tool's sessions turn that off.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${new URL(database.url).pathname.slice(1)}" SET standard_conforming_strings = off`);
    try {
      // A connection string that turns it off itself: the tool's setting comes after.
      const own = new URL(database.url);
      own.searchParams.set('options', '-c standard_conforming_strings=off');
      const turnsItOff: ResolvedCredential = { name: 'db_off_auth', type: 'postgres', data: { connection_string: own.toString() } };
      for (const credential of [urlCredential(), prefixedCredential(), turnsItOff]) {
        for (const v of hostile) {
          const command = render(`SELECT {{ v }}::text AS plain, '{{ v }}'::text AS quoted, E'{{ v }}'::text AS escaped, 'pre {{ v }} post' AS joined, 1 AS "c{{ v }}"`, v);
          const outcome = await postgres(task({ command }), ctx({ credential }));
          expect(outcome, `${JSON.stringify(v)}: ${command}`).toMatchObject({ status: 'ok', data: { row_count: 1 } });
          const row = (outcome.data as { rows: Record<string, unknown>[] }).rows[0];
          expect(row).toEqual({ plain: v, quoted: v, escaped: v, joined: `pre ${v} post`, [`c${v}`.slice(0, 63)]: 1 });
        }
      }
    } finally {
      await admin.query(`ALTER DATABASE "${new URL(database.url).pathname.slice(1)}" RESET standard_conforming_strings`);
      await admin.end();
    }
    const left = await postgres(task({ command: `SELECT count(*)::int AS n FROM ${schema}.users` }), ctx());
    expect(left).toMatchObject({ status: 'ok' });
  });

  it('writes numbers, booleans and none as themselves, and a list or mapping as its JSON text', async () => {
    const outcome = await postgres(
      task({ command: render('SELECT {{ v.n }} AS n, 10-{{ v.neg }} AS eleven, {{ v.t }} AS t, {{ v.nothing }} AS nothing, {{ v.list }}::jsonb AS list', { n: 41.5, neg: -1, t: true, nothing: null, list: [1, 'x'] }) }),
      ctx(),
    );
    expect(outcome).toMatchObject({ status: 'ok', data: { rows: [{ n: 41.5, eleven: 11, t: true, nothing: null, list: [1, 'x'] }] } });
  });

  it('is refused where no literal can stand: a comment, or a dollar-quoted string (a DO block\'s code)', () => {
    expect(() => render('SELECT 1 -- {{ v }}', 'x')).toThrow(/into a comment/);
    expect(() => render('SELECT 1 /* {{ v }} */', 'x')).toThrow(/into a comment/);
    expect(() => render('SELECT $q${{ v }}$q$', 'a$q$b')).toThrow(/dollar-quoted/);
    expect(() => render('SELECT $q${{ v }}$q$', "it's")).toThrow(/dollar-quoted/);
    // The server runs COPY … PROGRAM's string as a shell command.
    for (const template of ["COPY t FROM PROGRAM 'cat {{ v }}'", 'COPY t TO program {{ v }}', "COPY t FROM PROGRAM E'x{{ v }}'", "COPY (SELECT 1) TO /* c */ PROGRAM\n'wc -c {{ v }}'"]) {
      expect(() => render(template, 'x'), template).toThrow(/the command of COPY … PROGRAM/);
    }
    expect(render("COPY t FROM STDIN; SELECT 'program {{ v }}', {{ v }}", "it's")).toBe("COPY t FROM STDIN; SELECT 'program it''s', 'it''s'");
    // Written there as it is (as before), this value ended the DO block's string and ran its own SQL.
    expect(() => render(`DO $$ BEGIN RAISE NOTICE '{{ v }}'; END $$`, `'; DROP TABLE ${schema}.users; --`)).toThrow(
      /template error in start\.t\.command: a template cannot output into a dollar-quoted string \(\$\$\)/,
    );
  });
});
