// `svc inspect ID` printed only its header (`execution 7 (path)`) for an execution whose first
// step waits (a signal, a timer, a retry replayed up to an approval): the state at the start came
// in the stream's first message (@xstate.actor's snapshot) and was not shown, and no other
// message comes until something happens, so a live inspection read as a hang, with no word of
// the step it waits on (docs/cli.md: `active: approve (waiting)`). The first message now prints a
// line too, `execution.started  running  active: hold (waiting)`, as every later move does.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForOutput } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const GATE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: cli/audit/inspect-gate }
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
  await s.register(GATE);
});
afterAll(async () => {
  await s?.close();
});

it('svc inspect of an execution waiting at its first step shows it waiting at once', async () => {
  const id = await s.run('cli/audit/inspect-gate', {});
  await until('hold waits', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.hold?.status === 'waiting');
  const inspect = spawnSvc(['inspect', String(id)], { SVC_SERVER_URL: s.url });
  try {
    await waitForOutput(inspect, `execution ${id} (cli/audit/inspect-gate)`, 15_000);
    await waitForOutput(inspect, 'active: hold (waiting)', 3_000);
    expect(inspect.output()).toMatch(/\nexecution\.started\s+running\s+active: hold \(waiting\)\n/);
  } finally {
    await http(s.url, 'POST', `/api/executions/${id}/signals/go`, { payload: {} });
    expect(await inspect.exited).toBe(0);
  }
  expect(inspect.output()).toContain('execution completed');
});
