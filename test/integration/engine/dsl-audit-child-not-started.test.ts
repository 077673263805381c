// A `playbook` task whose child is never started (its path is not in the catalog, its args fail the
// child's inputs, it would nest too deep) has no child execution: its outcome's `execution_id`,
// the child.finished event and `svc logs` must not name one. They said execution
// 0, an id no execution has (`svc logs` printed "execution 0 failed: not_found: ...", and
// `steps.X.result.execution_id` was 0).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { RunApi } from '../../../src/cli/run-api.ts';
import { printLogs } from '../../../src/cli/logs-view.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workerOptions: { shell: UNSANDBOXED_SHELL } });
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: typed_kid, path: audit/not-started/kid }
inputs: { n: { type: integer, required: true } }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`);
});
afterAll(async () => s?.close());

const parent = (name: string, task: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: audit/not-started/${name} }
workflow:
  - step: start
    tool: ${task}
    next:
      - { step: seen, when: "{{ outcome.status == 'error' }}" }
  - step: seen
    tool: { name: echo, kind: noop }
`;

it.each([
  ['missing', '{ name: kid, kind: playbook, path: audit/not-started/none }', 'not_found'],
  ['refused', '{ name: kid, kind: playbook, path: audit/not-started/kid, args: { n: "x" } }', 'invalid_inputs'],
])('a playbook task whose child never started (%s) names no child execution', async (name, task, code) => {
  await s.register(parent(name, task));
  const id = await s.run(`audit/not-started/${name}`);
  expect((await s.wait(id)).status).toBe('completed');
  const finished = (await s.events(id)).find((e: Json) => e.event_type === 'child.finished');
  expect(finished.error.code).toBe(code);
  expect(finished.context.child_execution_id).toBeNull();
  const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;
  expect(state.steps.start.outcome.status).toBe('error');
  // The step's outcome, as the arc and later steps read it: no execution id.
  const exits = (await s.events(id)).filter((e: Json) => e.event_type === 'step.exit' && e.step === 'start');
  expect(exits).toHaveLength(1);
  const lines: string[] = [];
  await printLogs(new RunApi(s.url), id, { follow: false, json: false, out: { write: (t: string) => lines.push(t) }, signal: AbortSignal.timeout(10_000) });
  const logged = lines.join('');
  expect(logged).not.toMatch(/execution 0\b/);
  expect(logged).toContain(code);
  // The step's runs show the task and why it failed (its child.finished names the step: no child.started leads to it).
  const runs = (await http(s.url, 'GET', `/api/executions/${id}/steps/start`)).body.runs;
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ status: 'failed', child_execution_id: null, tasks: [{ task: 'kid', kind: 'playbook', attempts: [{ attempt: 1, status: 'error', error: { code } }] }] });
});

it('gives the task outcome execution_id none where a child never started', async () => {
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: reads, path: audit/not-started/reads }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: audit/not-started/none }
    next:
      - { step: seen, when: "{{ outcome.status == 'error' }}" }
  - step: seen
    tool: { name: echo, kind: shell, command: "echo {{ steps.start.result.execution_id is none }} {{ steps.start.tasks.kid.data.status }}" }
`);
  const id = await s.run('audit/not-started/reads');
  expect(await s.wait(id)).toMatchObject({ status: 'completed', result: { stdout: 'true failed\n' } });
});
