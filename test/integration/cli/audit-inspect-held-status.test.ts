// `svc inspect ID` printed `running` as the execution's state on every line of an execution that
// was paused or queued: its column is the machine's top state, which a pause and flow control's
// queue leave `running` (they are flags of its context), so the line after `execution.paused`
// read `execution.paused  running  active: hold (waiting)` while svc status and
// GET /api/executions/{id} said paused, and an execution queued on a limit began
// `execution.started  running  active: -`. The stream's snapshots now carry the execution's
// status as the API answers it, and the column shows it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForOutput } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const GATE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: cli/audit/inspect-held }
concurrency: { limit: inspect-held-one }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
    next: after
  - step: after
    tool: { name: done, kind: noop }
`;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
  expect((await http(s.url, 'PUT', '/api/limits/inspect-held-one', { concurrency: 1 })).status).toBe(200);
  await s.register(GATE);
});
afterAll(async () => {
  await s?.close();
});

it('svc inspect says paused while paused and queued while queued', async () => {
  const first = await s.run('cli/audit/inspect-held', {});
  await until('hold waits', async () => (await http(s.url, 'GET', `/api/executions/${first}/state`)).body.steps?.hold?.status === 'waiting');
  const second = await s.run('cli/audit/inspect-held', {});
  expect((await http(s.url, 'GET', `/api/executions/${second}`)).body.status).toBe('queued');
  expect((await http(s.url, 'POST', `/api/executions/${first}/pause`, {})).status).toBe(200);

  const paused = spawnSvc(['inspect', String(first)], { SVC_SERVER_URL: s.url });
  const queued = spawnSvc(['inspect', String(second)], { SVC_SERVER_URL: s.url });
  try {
    await waitForOutput(paused, 'execution.paused', 15_000);
    await waitForOutput(queued, 'execution.started', 15_000);
    expect(paused.output()).toMatch(/\nexecution\.started\s+running\s+active: hold \(waiting\)\n/);
    expect(paused.output()).toMatch(/\nexecution\.paused\s+paused\s+active: hold \(waiting\)\n/);
    expect(queued.output()).toMatch(/\nexecution\.started\s+queued\s+active: -\n/);
    expect((await http(s.url, 'POST', `/api/executions/${first}/resume`, {})).status).toBe(200);
    await waitForOutput(paused, 'execution.resumed', 5_000);
    expect(paused.output()).toMatch(/\nexecution\.resumed\s+running\s+active: hold \(waiting\)\n/);
  } finally {
    // Resumed (a 409 when it was already) so that its signal ends it and both streams close.
    await http(s.url, 'POST', `/api/executions/${first}/resume`, {});
    await http(s.url, 'POST', `/api/executions/${first}/signals/go`, { payload: {} });
    expect(await paused.exited).toBe(0);
    await until('the second admitted', async () => (await http(s.url, 'GET', `/api/executions/${second}/state`)).body.steps?.hold?.status === 'waiting', 15_000);
    await http(s.url, 'POST', `/api/executions/${second}/signals/go`, { payload: {} });
    expect(await queued.exited).toBe(0);
  }
  expect(queued.output()).toMatch(/\nexecution\.admitted\s+running\s+active: hold \(waiting\)\n/);
}, 60_000);
