// docs/operations.md (The service database): a `svc worker` with SVC_ALLOW_SERVICE_DB_TASKS=read_only
// logs in as the reader role, whose login it asks its server for, so its SVC_DATABASE_URL needs
// only where the database is. The docs asked for "SVC_DATABASE_URL" and so the service owner's
// password on every such worker; here a worker given the URL without user or password runs a
// read_only task as the reader.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let app: TestApp;
let worker: WorkerProcess;
beforeAll(async () => {
  app = await startTestApp();
  const where = new URL(app.databaseUrl);
  where.username = '';
  where.password = '';
  worker = await startWorkerProcess(app.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: app.workerToken, SVC_ALLOW_SERVICE_DB_TASKS: 'read_only', SVC_DATABASE_URL: where.toString() } });
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
});

describe('a `svc worker` with read_only and SVC_DATABASE_URL without a login', () => {
  it('runs a read_only task without auth as the reader role', async () => {
    const done = await runSqlTask(executionApi(app.url), 'SELECT current_user AS u', true);
    expect(done).toMatchObject({ status: 'completed', result: { rows: [{ u: expect.stringMatching(/^svc_sql_reader_[0-9a-f]{8}$/) }] } });
  });
});
