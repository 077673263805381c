import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// docs/playbook-dsl.md, Simulating: a decision reading another task's data depends on data, "its
// `status` is known". An arc reading `outcome.tasks.a.status` or `steps.X.tasks.a.status` stopped
// the simulation with depends_on_data (needs: [X]) where the run took the branch.

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: tasks, path: audit/sim-task-status }
workflow:
  - step: start
    tool:
      - { name: a, kind: shell, command: "echo a" }
      - { name: b, kind: shell, command: "exit 1" }
    next:
      - { step: check, when: "{{ outcome.status == 'error' and outcome.tasks.a.status == 'ok' }}" }
  - step: check
    next:
      - { step: first_ok, when: "{{ steps.start.tasks.a.status == 'ok' }}" }
      - { step: other }
  - step: first_ok
  - step: other
`;

const entered = (events: { event_type: string; step?: string | null }[]) => events.filter((e) => e.event_type === 'step.enter').map((e) => e.step);

describe("a decision on a task's status", () => {
  it('is made by the simulation as the run makes it, with no example', async () => {
    await s.register(PLAYBOOK);
    const id = await s.run('audit/sim-task-status');
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const real = entered(await s.events(id));
    expect(real).toEqual(['start', 'check', 'first_ok']);
    const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;

    const sim = simulatePlaybook(PLAYBOOK, { start: 'error' });
    expect(sim).toMatchObject({ status: 'completed', path: real });
    expect(sim.undecided).toBeUndefined();
    for (const [step, view] of Object.entries(sim.steps)) expect(view.status, step).toBe(state.steps[step].status);
  });

  it("still depends on data when it reads another task's data", () => {
    const pb = PLAYBOOK.replace("outcome.tasks.a.status == 'ok'", "outcome.tasks.a.data.stdout == 'a\\n'");
    expect(simulatePlaybook(pb, { start: 'error' })).toMatchObject({ status: 'depends_on_data', undecided: { step: 'start', at: 'next' } });
  });
});
