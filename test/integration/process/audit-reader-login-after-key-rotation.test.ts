// The reader role's password (a `read_only` postgres task without `auth` reads the service
// database as it) is derived from the server's current encryption key. A `svc worker` needs no
// key and is not restarted when the key rotates, and it keeps the login it was given for 10
// minutes: once the server with the new key had set the new password (its first use: another
// pool asking, an admin's POST /api/postgres/execute, the doctor), each of that worker's
// read_only tasks failed with `password authentication failed` until the 10 minutes were up.
// The worker now asks its server for the login again when the database refuses it, once.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { freePort } from '../../helpers/ports.ts';
import { runSqlTask } from '../../helpers/run-sql-task.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';

let bed: ServerProcesses;
const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');

beforeAll(async () => {
  bed = await ServerProcesses.open({});
});
afterAll(async () => bed?.close());

it('a worker that read as the reader role before a key rotation still reads after it, once the new password is set', async () => {
  const port = await freePort();
  const first = await bed.server({ SVC_ENCRYPTION_KEY: keyA }, port);
  const worker = await bed.worker(first.base, 1, { SVC_ALLOW_SERVICE_DB_TASKS: 'read_only', SVC_DATABASE_URL: bed.database.url });
  const before = await runSqlTask(executionApi(first.base), 'SELECT current_user AS u', true);
  expect(before.status, JSON.stringify(before)).toBe('completed');

  // Rotation: the same server, restarted with the new key (the old one still opens).
  first.proc.kill('SIGTERM');
  await first.proc.exited;
  const second = await bed.server({ SVC_ENCRYPTION_KEY: keyB, SVC_ENCRYPTION_KEYS_OLD: keyA }, port);
  // Its first use of the reader role sets the password of the new key.
  const set = await http(second.base, 'POST', '/api/postgres/execute', { query: 'SELECT 1 AS one' });
  expect(set.status, JSON.stringify(set.body)).toBe(200);

  const after = await runSqlTask(executionApi(second.base), 'SELECT current_user AS u', true);
  expect(after.status, `${JSON.stringify(after)}\n${worker.output()}`).toBe('completed');
  expect(JSON.stringify(after)).not.toContain('password authentication failed');
});
