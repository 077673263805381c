// A service database URL may name its login in the query (`postgres://host/db?user=svc&password=…`,
// as libpq and pg accept; common with a socket: `?host=/run/postgresql&user=svc`). pg takes those
// parameters over the user-info, so a reader URL made by setting only the user-info still logged
// in as the service user: `read_only` tasks without `auth` and POST /api/postgres/execute without
// a credential read core.credential and core.api_token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { runAsServiceReader } from '../../../src/db/sql-execute.ts';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { startWorkerProcess, startWorkerStack, type WorkerProcess, type WorkerStack } from '../../helpers/worker-process.ts';

/** `url` with its login moved from the user-info to the `user` and `password` query parameters. */
function loginInQuery(url: string): string {
  const u = new URL(url);
  u.searchParams.set('user', decodeURIComponent(u.username));
  if (u.password) u.searchParams.set('password', decodeURIComponent(u.password));
  u.username = '';
  u.password = '';
  return u.toString();
}

const READER = /^svc_sql_reader_[0-9a-f]{8}$/;

let stack: WorkerStack;
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  stack = await startWorkerStack({ workers: 0 });
  worker = await startWorkerProcess(stack.url, {
    env: { SVC_WORKER_TOKEN: stack.workerToken, SVC_ALLOW_SERVICE_DB_TASKS: 'true', SVC_DATABASE_URL: loginInQuery(stack.databaseUrl) },
  });
}, 60_000);
afterAll(async () => {
  expect(await worker?.stop()).toBe(0);
  await stack?.close();
});

describe('a service database URL whose login is in its query', () => {
  it('a `svc worker` runs read_only tasks without auth as the reader role, never as that login', async () => {
    const done = await runSqlTask(stack, 'SELECT current_user AS u, session_user AS s', true);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    const [row] = (done.result as { rows: { u: string; s: string }[] }).rows;
    expect(row.u).toMatch(READER);
    expect(row.s).toMatch(READER);
    for (const sql of ['SELECT name, data_encrypted FROM core.credential', 'SELECT * FROM core.api_token']) {
      const refused = await runSqlTask(stack, sql, true);
      expect(refused.status, sql).toBe('failed');
      expect(JSON.stringify(refused.error), sql).toMatch(/permission denied/);
    }
  });

  it('the server reads as the reader role too (POST /api/postgres/execute, svc doctor)', async () => {
    const db = new Db(loginInQuery(stack.databaseUrl), 2);
    try {
      const [row] = await runAsServiceReader(db, 'reader-password-query-login_1', 'SELECT current_user AS u, session_user AS s');
      expect(String(row.u)).toMatch(READER);
      expect(String(row.s)).toMatch(READER);
      await expect(runAsServiceReader(db, 'reader-password-query-login_1', 'SELECT name FROM core.credential')).rejects.toThrow(/permission denied/);
    } finally {
      await db.close();
    }
  });
});
