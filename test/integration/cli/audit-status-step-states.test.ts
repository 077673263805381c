// `svc status` and `svc inspect` as run against a real server, each a real process, for step
// states the audit found shown wrong: a task limit with no key read `key ""` (the console says
// "(empty key)"); loop items whose commands wait for room on a task's limit were counted "in
// flight" (they are waiting); a step whose command a pause holds read `active -`; and `svc
// inspect` listed a step waiting for a signal among the finished steps.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

// A parallel loop of three items on a limit with no key, never defined: every command waits for room.
const ROOM = `apiVersion: svc/v1
kind: Playbook
metadata: { name: room, path: cli/audit/room }
workflow:
  - step: start
    loop: { in: "{{ [1, 2, 3] }}", iterator: n, mode: parallel }
    tool: { name: call, kind: noop, limit: { name: cli-audit-nokey } }
`;
const GATE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: cli/audit/gate }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
    next: after
  - step: after
    tool: { name: done, kind: noop }
`;

let s: TestStack;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestStack();
  env = { SVC_SERVER_URL: s.url };
  for (const playbook of [ROOM, GATE]) await s.register(playbook);
});
afterAll(async () => {
  await s?.close();
});
const rowOf = (text: string, step: string) => text.split('\n').find((l) => l.startsWith(`${step} `));

it('items waiting for room on a keyless limit: waiting, not in flight, on "(empty key)"', async () => {
  const id = await s.run('cli/audit/room', {});
  await until('three commands wait for room', async () => (await http(s.url, 'GET', `/api/executions/${id}`)).body.limit_waits?.length === 3);
  const out = await runSvc(['status', String(id)], env);
  expect(rowOf(out.stdout, 'start')).toMatch(/^start\s+active\s+0\/3 items done, 0 in flight, 3 waiting; 3 commands wait for room on limit cli-audit-nokey key \(empty key\) \(not defined/);
  await http(s.url, 'POST', `/api/executions/${id}/cancel`, {});
});

it('a step whose command the pause holds says so; svc inspect lists a waiting step as active', async () => {
  const id = await s.run('cli/audit/gate', {});
  await until('hold waits', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.hold?.status === 'waiting');
  expect((await runSvc(['pause', String(id)], env)).code).toBe(0);
  expect((await runSvc(['signal', String(id), 'go', '--data', '{}'], env)).code).toBe(0);
  await until('after is entered', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.after?.status === 'active');
  const out = await runSvc(['status', String(id)], env);
  expect(rowOf(out.stdout, 'after')).toMatch(/^after\s+active\s+held \(paused\): 1 command issued once resumed$/);

  expect((await runSvc(['resume', String(id)], env)).code).toBe(0);
  expect((await s.wait(id)).status).toBe('completed');
  const inspected = await runSvc(['inspect', String(id)], env);
  expect(inspected.code).toBe(0);
  const waitingLine = inspected.stdout.split('\n').find((l) => l.includes('hold'));
  expect(waitingLine).toMatch(/active: hold \(waiting\)/);
  expect(inspected.stdout).not.toMatch(/\| .*hold waiting/);
});
