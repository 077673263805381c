// A `playbook` task whose literal args the child's inputs refuse was registered without a word,
// though the child was in the catalog and every run of the task then failed invalid_inputs,
// starting no child. Registration now warns of it at the task's args, naming each field as the
// run's refusal does; a value a template renders is judged as it renders, not at registration.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const parent = (name: string, args: string) => `apiVersion: svc/v1
metadata: { name: ${name}, path: args/${name} }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: args/child, args: ${args} }
`;

it('warns of literal args the child refuses, and runs refuse them alike', async () => {
  const api = executionApi(t.url);
  await api.register(`apiVersion: svc/v1
metadata: { name: child, path: args/child }
inputs:
  target: { type: string, required: true }
  mode:   { type: string, enum: [fast, slow], default: fast }
workflow:
  - step: start
`);
  const wrong = await api.register(parent('wrong', '{ target: 5, mode: quick }'));
  expect(wrong.warnings).toEqual([
    `workflow[0].tool.args: args/child's inputs refuse these args (invalid_inputs): workload.mode: must be one of "fast", "slow", got "quick"; workload.target: must be string, got integer; as it is registered now, this task fails and starts no child`,
  ]);
  const missing = await api.register(parent('missing', '{ mode: slow }'));
  expect(missing.warnings).toEqual([expect.stringContaining('(invalid_inputs): workload.target: is required;')]);
  // Rendered values are the run's to judge; a right literal one is no warning.
  expect((await api.register(parent('rendered', '{ target: "{{ workload.t }}", mode: "{{ workload.m }}" }'))).warnings).toEqual([]);
  expect((await api.register(parent('right', '{ target: x, mode: slow }'))).warnings).toEqual([]);

  const run = await api.wait(await api.run('args/wrong'));
  expect(run.status).toBe('failed');
  expect(run.error).toMatchObject({ code: 'invalid_inputs', message: expect.stringContaining('workload.target: must be string, got integer') });
});
