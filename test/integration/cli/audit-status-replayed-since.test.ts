// What `svc status`, GET /api/executions/{id} and GET /api/executions/{id}/state say, on a real
// server with `svc` as a real process, of two things the audit found missing: since when a step
// waits (a signal wait without timeout read `signal go` and nothing more: waiting one second or a
// week looked the same), and a retry's replayed steps (they read `completed ok`, exactly as if
// they ran again in the retry, though their tasks never ran there).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const GATE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: cli/audit/replayed-gate }
workflow:
  - step: first
    tool: { name: one, kind: noop }
    next: hold
  - step: hold
    wait: { signal: go }
    next: after
  - step: after
    tool: { name: done, kind: noop }
`;

let s: TestStack;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestStack();
  env = { SVC_SERVER_URL: s.url };
  await s.register(GATE);
});
afterAll(async () => {
  await s?.close();
});
const rowOf = (text: string, step: string) => text.split('\n').find((l) => l.startsWith(`${step} `));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

it('a waiting step says since when it waits; a retry marks the steps it replayed, not ran', async () => {
  const before = Date.now();
  const id = await s.run('cli/audit/replayed-gate', {});
  await until('hold waits', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.hold?.status === 'waiting');
  const after = Date.now();

  const detail = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
  expect(detail.waits).toHaveLength(1);
  const since: string = detail.waits[0].since;
  expect(since).toMatch(ISO);
  // The server's clock, within the test's (one machine), and not before the execution started.
  expect(Date.parse(since)).toBeGreaterThanOrEqual(Date.parse(detail.started_at));
  expect(Date.parse(since)).toBeGreaterThanOrEqual(before - 1_000);
  expect(Date.parse(since)).toBeLessThanOrEqual(after + 1_000);
  const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;
  expect(state.steps.hold.wait.since).toBe(since);

  const waiting = await runSvc(['status', String(id)], env);
  expect(waiting.code).toBe(0);
  expect(rowOf(waiting.stdout, 'hold')).toMatch(/^hold\s+waiting\s+signal go, waiting since \d{4}-\d\d-\d\dT[\d:.]+Z \([\d.]+\w* ago\)$/);

  expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
  const retried = await http(s.url, 'POST', `/api/executions/${id}/retry`, {});
  expect(retried.status, JSON.stringify(retried.body)).toBe(201);
  expect(retried.body).toMatchObject({ from_step: 'hold', replayed: ['first'] });
  const second: number = retried.body.execution_id;
  await until('hold waits again', async () => (await http(s.url, 'GET', `/api/executions/${second}/state`)).body.steps?.hold?.status === 'waiting');

  const replayedState = (await http(s.url, 'GET', `/api/executions/${second}/state`)).body;
  expect(replayedState.steps.first).toMatchObject({ status: 'completed', replayed: 1 });
  expect(replayedState.steps.hold.replayed).toBeUndefined();
  const out = await runSvc(['status', String(second)], env);
  expect(out.code).toBe(0);
  expect(rowOf(out.stdout, 'first')).toMatch(new RegExp(`^first\\s+completed\\s+replayed from ${id}; ok$`));
  expect(rowOf(out.stdout, 'hold')).toMatch(/^hold\s+waiting\s+signal go, waiting since /);

  expect((await runSvc(['signal', String(second), 'go', '--data', '{}'], env)).code).toBe(0);
  expect((await s.wait(second)).status).toBe('completed');
  // Finished: still replayed (its outcome came from the first execution), and the rest ran.
  const done = (await http(s.url, 'GET', `/api/executions/${second}/state`)).body;
  expect(done.steps.first).toMatchObject({ status: 'completed', replayed: 1 });
  expect(done.steps.after.replayed).toBeUndefined();
  const ended = await runSvc(['status', String(second)], env);
  expect(rowOf(ended.stdout, 'first')).toMatch(/replayed from/);
  expect(rowOf(ended.stdout, 'after')).not.toMatch(/replayed/);
});
