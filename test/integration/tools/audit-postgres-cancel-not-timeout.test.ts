// SQLSTATE 57014 (query_canceled) is what statement_timeout raises, and also a cancel from another
// session, or a COPY FROM STDIN the task has no stream for. A task with timeout_seconds reported
// every one of them as `timeout` at once, long before its time ran out: a `retry.when` on timeouts
// retried a statement that fails the same way each time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http } from '../../helpers/http.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
  const created = await http(stack.url, 'POST', '/api/credentials', { name: 'db_auth', type: 'postgres', data: { connection_string: stack.databaseUrl } });
  expect(created.status).toBe(201);
}, 60_000);
afterAll(async () => stack?.close());

async function failedWith(name: string, command: string, timeoutSeconds: number) {
  const path = `audit/${name}`;
  await stack.register(
    `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: ${path} }\nworkflow:\n  - step: start\n    tool:\n      - { name: q, kind: postgres, auth: db_auth, timeout_seconds: ${timeoutSeconds}, command: ${JSON.stringify(command)} }\n`,
  );
  const execution = await stack.wait(await stack.run(path), 30_000);
  expect(execution.status).toBe('failed');
  return execution.error;
}

describe('a postgres task cancelled before its timeout_seconds', () => {
  it('is an sql_error with its sqlstate, not a timeout', async () => {
    const cancelled = await failedWith('pg_cancelled', 'SELECT pg_cancel_backend(pg_backend_pid())', 60);
    expect(cancelled).toMatchObject({ code: 'sql_error', message: expect.stringContaining('57014') });
    const copy = await failedWith('pg_copy_in', 'COPY (SELECT 1) TO STDOUT; CREATE TEMP TABLE t (a int); COPY t FROM STDIN', 60);
    expect(copy).toMatchObject({ code: 'sql_error' });
  });

  it('is still a timeout when the statement ran out its time', async () => {
    expect(await failedWith('pg_slow', 'SELECT pg_sleep(10)', 0.5)).toMatchObject({ code: 'timeout' });
  });
});
