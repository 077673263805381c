// The service database's reader role runs a statement for at most 30 s (its own statement_timeout,
// migrations/0002), but a read_only postgres task without auth sent its timeout_seconds as the
// connection's statement_timeout, which replaces the role's: with `timeout_seconds: 600` the
// statement ran 10 minutes, holding what it locked (the migrations' advisory lock, which every role
// may take) for as long as the playbook's author wrote. Here a real `svc worker` runs such tasks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startWorkerStack({ serviceDbTasks: 'read_only' });
});
afterAll(async () => stack?.close());

const setting = "SELECT current_setting('statement_timeout') AS t, current_user AS u";

describe('a read_only postgres task without auth, as the reader role', () => {
  it('runs a statement no longer than the role does, whatever its timeout_seconds', async () => {
    const done = await runSqlTask(stack, setting, true, 600);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result).toMatchObject({ rows: [{ t: '30s', u: expect.stringMatching(/^svc_sql_reader_/) }] });
  });

  it('keeps a shorter timeout_seconds, and the role\'s bound without one', async () => {
    expect((await runSqlTask(stack, setting, true, 2)).result).toMatchObject({ rows: [{ t: '2s' }] });
    expect((await runSqlTask(stack, setting, true)).result).toMatchObject({ rows: [{ t: '30s' }] });
  });
});
