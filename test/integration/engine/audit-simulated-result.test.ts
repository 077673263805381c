// A test author could assert a simulation's status, path and steps, but not what the playbook
// returns: simulatePlaybook answered no `result`, though a real execution has one (GET
// /api/executions/{id}: its last step's). Given as its example result what a real run's last task
// gives, the simulation now answers the result the run ends with; a failed or undecided one, none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => {
  await s?.close();
});

const yaml = `apiVersion: svc/v1
metadata: { name: answer, path: simulated_result/answer }
workflow:
  - step: start
    tool: { name: first, kind: shell, command: 'echo first' }
    next: report
  - step: report
    tool: { name: say, kind: shell, command: 'echo squares: 1 4 9' }
`;

describe("a simulation's result", () => {
  it('is the one a real run ends with, given the same task data; none when the run fails or is undecided', async () => {
    await s.register(yaml);
    const ended = await s.wait(await s.run('simulated_result/answer'), 30_000);
    expect(ended).toMatchObject({ status: 'completed' });
    const data = { exit_code: 0, stdout: 'squares: 1 4 9\n', stderr: '' };
    expect(ended.result).toEqual(data);

    expect(simulatePlaybook(yaml, {}, { results: { report: data } })).toMatchObject({ status: 'completed', result: ended.result });
    expect(simulatePlaybook(yaml, { report: 'error' }, { results: { report: data } })).toMatchObject({ status: 'failed', result: null });
    expect(simulatePlaybook(yaml)).toMatchObject({ status: 'completed', result: null });
  });
});
