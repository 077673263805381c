import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// docs/playbook-dsl.md, Simulating: a decision reading a step's result with no example depends on
// data. Some results are the same in every run, example or not: a step without `tool` (it only
// routes) has none, a step whose last task is a `noop` has null, and a loop over no items has the
// empty list. `svc simulate` stopped before such a decision with depends_on_data ("no example
// result of route") where every run takes the same arc; and an example given for a step without
// tool was ignored, so nothing the user could give made it decide.

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: known, path: audit/sim-known-results }
workload: { items: [] }
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: it }
    tool: { name: each, kind: shell, command: "echo {{ it }}" }
    next:
      - { step: route, when: "{{ outcome.result | length == 0 }}" }
      - { step: some }
  - step: route
    next:
      - { step: ping, when: "{{ outcome.result is none }}" }
      - { step: some }
  - step: ping
    tool: { name: nothing, kind: noop }
    next:
      - { step: done, when: "{{ steps.ping.result is none and steps.route.result is none }}" }
      - { step: some }
  - step: done
  - step: some
`;

const entered = (events: { event_type: string; step?: string | null }[]) => events.filter((e) => e.event_type === 'step.enter').map((e) => e.step);

describe('a decision on a result every run has the same', () => {
  it('is made by the simulation as the run makes it, with no example', async () => {
    await s.register(PLAYBOOK);
    const id = await s.run('audit/sim-known-results');
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const real = entered(await s.events(id));
    expect(real).toEqual(['start', 'route', 'ping', 'done']);
    const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;

    const sim = simulatePlaybook(PLAYBOOK);
    expect(sim.undecided).toBeUndefined();
    expect(sim).toMatchObject({ status: 'completed', path: real });
    for (const [step, view] of Object.entries(sim.steps)) expect(view.status, step).toBe(state.steps[step].status);
    // Every path of the search decides alike: `some` is reached by none of them.
    expect(playbookPaths(PLAYBOOK)).toMatchObject({ unreachable: ['some'], depends_on_data: [] });
  });

  it('still depends on data for a loop that ran items, whose results the run has', () => {
    expect(simulatePlaybook(PLAYBOOK, {}, { payload: { items: [1] } })).toMatchObject({ status: 'depends_on_data', undecided: { step: 'start', at: 'next', needs: ['start'] } });
  });
});
