import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// A step's example is its result, the data of its last task (docs/playbook-dsl.md, Simulating);
// a `playbook` task's data is {execution_id, status, result}. The simulation took the example for
// the child's result and nested it ({execution_id: 0, status, result: <example>}), so the example
// of what a real run's steps.start.result holds failed the simulated run with a template_error
// where the run took the branch.

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const CHILD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: kid, path: audit/sim-child/kid }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: 'echo ''{"n": 1}''' }
`;

const PARENT = (examples: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: audit/sim-child/parent }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: audit/sim-child/kid }
    next:
      - { step: good, when: "{{ steps.start.result.status == 'completed' and (steps.start.result.result.stdout | fromjson).n == 1 }}" }
      - { step: bad }
  - step: good
  - step: bad
${examples}`;

const entered = (events: { event_type: string; step?: string | null }[]) => events.filter((e) => e.event_type === 'step.enter').map((e) => e.step);

describe("the example of a playbook task's step", () => {
  it('is the step result a run gives, and the simulation takes the branch the run takes', async () => {
    await s.register(CHILD);
    await s.register(PARENT(''));
    const id = await s.run('audit/sim-child/parent');
    const done = await s.wait(id);
    expect(done, JSON.stringify(done.error)).toMatchObject({ status: 'completed' });
    const events = await s.events(id);
    expect(entered(events)).toEqual(['start', 'good']);
    // What steps.start.result held in the run (its step.exit's result), written as the example.
    const result = events.find((e) => e.event_type === 'step.exit' && e.step === 'start')?.result as { execution_id: number; status: string; result: unknown };
    expect(result).toMatchObject({ status: 'completed', result: { stdout: '{"n": 1}\n' } });

    const sim = simulatePlaybook(PARENT(`examples:\n  start: ${JSON.stringify(result)}\n`));
    expect(sim).toMatchObject({ status: 'completed', path: ['start', 'good'], error: null });
    expect(simulatePlaybook(PARENT(''), {}, { results: { start: result } })).toMatchObject({ status: 'completed', path: ['start', 'good'] });
    // Another child result takes the other branch.
    const other = { ...result, result: { exit_code: 0, stdout: '{"n": 2}\n', stderr: '' } };
    expect(simulatePlaybook(PARENT(''), {}, { results: { start: other } })).toMatchObject({ status: 'completed', path: ['start', 'bad'] });
  });
});
