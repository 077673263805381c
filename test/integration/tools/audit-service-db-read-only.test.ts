// SVC_ALLOW_SERVICE_DB_TASKS=true is what docs/operations.md gave `svc doctor detect` beside `svc
// server`, and it let any postgres task without auth that is not read_only run as the service's
// own user, the owner of every table: an operator who registers playbooks could read API tokens'
// hashes and sealed credentials and give a token the admin role. `read_only` gives a `svc worker`
// only the reader role (what detect needs); the others are refused. `true` keeps its meaning and
// the worker says at start what it grants.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { startWorkerProcess, startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startWorkerStack({ serviceDbTasks: 'read_only' });
});
afterAll(async () => stack?.close());

const runSql = (command: string, readOnly: boolean) => runSqlTask(stack, command, readOnly);

describe('a `svc worker` with SVC_ALLOW_SERVICE_DB_TASKS=read_only', () => {
  it('runs read_only tasks without auth as the reader role', async () => {
    const done = await runSql('SELECT count(*)::int AS n, current_user AS u FROM core.execution', true);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(JSON.stringify(done.result)).toMatch(/svc_sql_reader_[0-9a-f]{8}/);
  });

  it('refuses a task without auth that is not read_only: never the service user, nothing changed', async () => {
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(`INSERT INTO core.api_token (name, hash, prefix, role) VALUES ('audit_viewer', $1, 'svc_x', 'viewer')`, ['a'.repeat(64)]);
      for (const sql of ['SELECT name, hash, role FROM core.api_token', "UPDATE core.api_token SET role = 'admin' WHERE name = 'audit_viewer'", 'SELECT current_user AS u']) {
        const done = await runSql(sql, false);
        expect(done.status, sql).toBe('failed');
        expect(JSON.stringify(done.error), sql).toMatch(/no_connection/);
      }
      expect((await db.query(`SELECT role FROM core.api_token WHERE name = 'audit_viewer'`)).rows).toEqual([{ role: 'viewer' }]);
    } finally {
      await db.end();
    }
  });

  it('warns of nothing at start; a worker given true says what it grants', async () => {
    expect(stack.workers[0].output()).not.toMatch(/SVC_ALLOW_SERVICE_DB_TASKS=true/);
    const w = await startWorkerProcess(stack.url, { env: { SVC_WORKER_TOKEN: stack.workerToken, SVC_ALLOW_SERVICE_DB_TASKS: 'true', SVC_DATABASE_URL: stack.databaseUrl } });
    try {
      expect(w.output()).toMatch(/SVC_ALLOW_SERVICE_DB_TASKS=true: postgres tasks without auth that are not read_only run as the service database's own user/);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });
});
