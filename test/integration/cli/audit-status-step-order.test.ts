// `svc status` lists an execution's steps "in the playbook's order", read off GET …/state's `steps`
// object, whose keys JavaScript reorders: a step named `2` came first, above `build` that ran
// before it. The state answers `step_order` (the playbook's), and the table follows it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
  await s.register(`
apiVersion: svc/v1
metadata: { name: ordered, path: cli/audit/step-order }
workflow:
  - step: build
    tool: { name: b, kind: noop }
    next: "2"
  - step: "2"
    tool: { name: two, kind: noop }
    next: deploy
  - step: deploy
    tool: { name: d, kind: noop }
    next: "10"
  - step: "10"
    tool: { name: ten, kind: noop }
`);
}, 60_000);
afterAll(async () => {
  await s?.close();
});

it('svc status lists steps named like numbers where the playbook has them', async () => {
  const id = await s.run('cli/audit/step-order');
  expect((await s.wait(id)).status).toBe('completed');
  const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;
  expect(state.step_order).toEqual(['build', '2', 'deploy', '10']);
  const status = await runSvc(['status', String(id)], { SVC_SERVER_URL: s.url });
  expect(status.code, status.stderr).toBe(0);
  const table = status.stdout.slice(status.stdout.indexOf('STEP'));
  const rows = table.split('\n').slice(1).filter(Boolean).map((line) => line.split(/\s+/)[0]);
  expect(rows).toEqual(['build', '2', 'deploy', '10']);
});
