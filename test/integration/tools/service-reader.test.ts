// A `svc worker` allowed the service database (SVC_ALLOW_SERVICE_DB_TASKS) whose SVC_DATABASE_URL
// is a superuser: an operator's `read_only` postgres tasks without `auth` still run as the reader
// role (its login asked of the server, GET /api/worker/service-reader), never as that superuser.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { VALUES_QUERY, VALUES_ROW } from '../../helpers/sql-values.ts';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startWorkerStack({ serviceDbTasks: true });
});
afterAll(async () => stack?.close());

/** Runs `command` as a playbook's one postgres task and returns the finished execution. */
const runSql = (command: string, readOnly = true) => runSqlTask(stack, command, readOnly);

describe('read_only postgres tasks without auth on a `svc worker` whose SVC_DATABASE_URL is a superuser', () => {
  it('the service user really is a superuser here (else this test proves nothing)', async () => {
    const c = new pg.Client({ connectionString: stack.databaseUrl });
    await c.connect();
    try {
      expect((await c.query('SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).rows[0].rolsuper).toBe(true);
    } finally {
      await c.end();
    }
  });

  it('an allowed read works, as the reader role', async () => {
    const done = await runSql('SELECT count(*)::int AS n, current_user AS u FROM core.execution');
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(JSON.stringify(done.result)).toMatch(/svc_sql_reader_[0-9a-f]{8}/);
  });

  it('its result keeps the values as PostgreSQL has them, stored as the execution\'s result', async () => {
    const done = await runSql(VALUES_QUERY);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result).toEqual({ command: 'SELECT', row_count: 1, rows: [VALUES_ROW] });
  });

  it('secret tables, server files, SET ROLE and COPY TO PROGRAM are each refused (a task error)', async () => {
    const superuser = decodeURIComponent(new URL(stack.databaseUrl).username);
    const marker = `/tmp/svc-reader-probe-${randomBytes(4).toString('hex')}`;
    for (const sql of [
      'SELECT name, data_encrypted FROM core.credential',
      'SELECT * FROM core.api_token',
      "SELECT pg_read_file('postgresql.conf')",
      'SET ROLE postgres',
      `SET ROLE ${pg.escapeIdentifier(superuser)}`,
      `COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`,
      'SELECT input FROM core.command',
      'SELECT * FROM core.keychain',
    ]) {
      const done = await runSql(sql);
      expect(done.status, sql).toBe('failed');
      expect(JSON.stringify(done.error), sql).toMatch(/permission denied|must be superuser|privileges of the pg_/i);
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('a task that is not read_only keeps running as the service user (the flag is that opt-in)', async () => {
    const done = await runSql('SELECT current_user AS u', false);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(JSON.stringify(done.result)).not.toMatch(/svc_sql_reader_/);
  });
});

describe('GET /api/worker/service-reader', () => {
  it('answers the worker token only for a command its pool holds with a read_only task without auth', async () => {
    const refused = await http(stack.url, 'GET', '/api/worker/service-reader', undefined, { ...asWorker, 'x-svc-command': '1', 'x-svc-attempt': '1', 'x-svc-worker': 'nobody' });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).not.toMatch(/password/);
    const anonymous = await http(stack.url, 'GET', '/api/worker/service-reader');
    expect([401, 403]).toContain(anonymous.status);
  });
});
