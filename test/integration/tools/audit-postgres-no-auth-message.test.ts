// A postgres task without auth (and not read_only) on a worker that may not use the service
// database failed 'postgres task needs an auth credential', naming neither read_only: true, which
// reads the service database as its reader role, nor SVC_ALLOW_SERVICE_DB_TASKS (docs/playbook-dsl.md):
// an author who meant to read the service database was told to make a credential for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startWorkerStack();
});
afterAll(async () => stack?.close());

describe('a postgres task without auth on a `svc worker` that may not use the service database', () => {
  it('fails no_connection saying what it needs: a credential, read_only: true, or the worker setting', async () => {
    const done = await runSqlTask(stack, 'SELECT 1', false);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'no_connection' } });
    expect(done.error.message).toMatch(/needs a credential \(auth: NAME\), or read_only: true to read the service database as its reader role; .*SVC_ALLOW_SERVICE_DB_TASKS=true/);
  });
});
