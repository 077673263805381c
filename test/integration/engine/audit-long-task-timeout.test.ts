// A worker task's timeout_seconds past Node's longest timer (2^31-1 ms, about 24.8 days) timed the
// task out at once: AbortSignal.timeout runs a longer delay after 1 ms (TimeoutOverflowWarning), so
// `timeout_seconds: 3000000` (about 35 days) failed a shell task with code timeout before it had
// run, and a postgres task's statement_timeout of that many ms is past PostgreSQL's range too. Such
// a timeout is now held at the longest a timer waits: the task runs.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ env: { SVC_ALLOW_SERVICE_DB_TASKS: 'true' } });
});
afterAll(async () => s?.close());

const playbook = (path: string, task: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: long_timeout, path: ${path} }
workflow:
  - step: start
    tool: ${task}
`;

it('runs a shell task whose timeout_seconds is longer than a Node timer can wait', async () => {
  await s.register(playbook('audit/long-timeout-shell', '{ name: nap, kind: shell, command: "sleep 0.3; echo woke", timeout_seconds: 3000000 }'));
  const done = await s.wait(await s.run('audit/long-timeout-shell'));
  expect(done).toMatchObject({ status: 'completed', error: null, result: { exit_code: 0, stdout: 'woke\n' } });
});

it('runs a templated timeout of that size too', async () => {
  await s.register(playbook('audit/long-timeout-template', '{ name: nap, kind: shell, command: "echo woke", timeout_seconds: "{{ workload.t }}" }'));
  const done = await s.wait(await s.run('audit/long-timeout-template', { t: 1e9 }));
  expect(done).toMatchObject({ status: 'completed', error: null, result: { stdout: 'woke\n' } });
});

it('runs a postgres task whose timeout_seconds is past statement_timeout\'s range', async () => {
  await s.register(playbook('audit/long-timeout-sql', '{ name: q, kind: postgres, command: "SELECT 1 AS one", timeout_seconds: 3000000 }'));
  const done = await s.wait(await s.run('audit/long-timeout-sql'));
  expect(done).toMatchObject({ status: 'completed', error: null, result: { rows: [{ one: 1 }] } });
});

it('still times a task out within a short timeout_seconds', async () => {
  await s.register(playbook('audit/short-timeout', '{ name: nap, kind: shell, command: "sleep 5", timeout_seconds: 0.3 }'));
  const done = await s.wait(await s.run('audit/short-timeout'));
  expect(done).toMatchObject({ status: 'failed', error: { code: 'timeout', step: 'start' } });
});
