// Registration refused a chain of 1,000+ steps without tools only after the simulation had the
// machine enter a thousand of them: 1-2 s of the server's one thread, every other request waiting.
// The path every run of such a playbook takes is read off the graph now (entryStepCycle) when its
// entry leads to the step_cycle failure through steps entered at once; these check that reading
// agrees with the machine itself (its initial transition, nothing simulated) on every shape, and
// that registrationPaths answers with it, no machine run.
import { initialTransition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createExecutionMachine, topStateOf } from '../../../machines/execution.machine.ts';
import { registrationPaths, type SimulatedPath } from '../../../machines/simulate-playbook.ts';
import { entryStepCycle, stepCycleProblem } from '../../../machines/step-cycle-problem.ts';
import type { NormalizedPlaybook } from '../../../src/dsl/parse-playbook.ts';
import { effectsOf, inputOf, playbookOf, records, shell, type StepDoc } from './helpers.ts';

/** What the machine does in a run's first event: the failed path as registration's simulation records it, or null when it does not fail step_cycle there. */
function machineFirstEvent(pb: NormalizedPlaybook): SimulatedPath | null {
  const [snap, actions] = initialTransition(createExecutionMachine(pb), inputOf({ workload: pb.workload }));
  const error = snap.context.finished?.error;
  if (error?.code !== 'step_cycle') return null;
  const path = records(effectsOf(actions)).flatMap((r) => (r.eventType === 'step.enter' && r.step ? [r.step] : []));
  return { status: topStateOf(snap.value), path, outcomes: [], cut: false, error };
}

/** s0 → s1 → … → sN: n + 1 steps, none with a tool unless `extra` gives one. */
const chain = (n: number, extra: (i: number) => Record<string, unknown> = () => ({})): StepDoc[] => [...Array.from({ length: n }, (_, i) => ({ step: `s${i}`, next: `s${i + 1}`, ...extra(i) })), { step: `s${n}` }];
const fork: StepDoc = { step: 'fork', tool: [shell('t')], next: { mode: 'inclusive', arcs: [{ step: 'a' }, { step: 'b' }] } };

// Each shape, and whether its entry's steps entered at once fail it (the structural reading fires).
const shapes: [string, StepDoc[], boolean][] = [
  ['ping-pong', [{ step: 'start', next: 'ping' }, { step: 'ping', next: 'pong' }, { step: 'pong', next: 'ping' }], true],
  ['a step entering itself', [{ step: 'start', next: 'start' }], true],
  ['a chain of 999 steps', chain(998), false],
  ['a chain of 1,000 steps (as many as one event enters)', chain(999), false],
  ['a chain of 1,001 steps', chain(1000), true],
  ['a chain of 1,002 steps', chain(1001), true],
  ['a chain of 5,001 steps', chain(5000), true],
  ['a cycle behind a prefix', [...chain(3).slice(0, 3), { step: 's3', next: 's4' }, { step: 's4', next: 's3' }], true],
  ['a cycle in a playbook with an inclusive fork elsewhere', [{ step: 'start', next: 'ping' }, { step: 'ping', next: 'pong' }, { step: 'pong', next: 'ping' }, fork, { step: 'a' }, { step: 'b' }], true],
  ['an exclusive list whose first arc holds', [{ step: 'start', next: ['start', 'end'] }, { step: 'end' }], true],
  ['an inclusive fork of one arc', [{ step: 'start', next: { mode: 'inclusive', arcs: [{ step: 'start' }] } }], true],
  ['an inclusive fork of two arcs', [{ step: 'start', next: { mode: 'inclusive', arcs: [{ step: 'start' }, { step: 'end' }] } }, { step: 'end' }], false],
  ['a cycle whose arc has a when', [{ step: 'start', next: [{ step: 'start', when: '{{ true }}' }] }], false],
  ['a cycle whose arc sets a var', [{ step: 'start', next: [{ step: 'start', set: { n: 1 } }] }], false],
  ['a cycle with a task', [{ step: 'start', tool: [shell('t')], next: 'again' }, { step: 'again', next: 'start' }], false],
  ['a cycle with a wait', [{ step: 'start', wait: { for: '1s' }, next: 'again' }, { step: 'again', next: 'start' }], false],
  ['a chain of 2,000 steps with a task at 500', chain(2000, (i) => (i === 500 ? { tool: [shell('t')] } : {})), false],
];

describe('entryStepCycle', () => {
  it.each(shapes)('%s: agrees with the machine', (_name, workflow, fires) => {
    const pb = playbookOf(workflow);
    const read = entryStepCycle(pb);
    expect(read !== null).toBe(fires);
    // Whenever it fires, it is exactly the machine's failed first event.
    if (read) expect(read).toEqual(machineFirstEvent(pb));
  });

  it('a chain of when-arcs still fails step_cycle by the simulation, as before (the machine judges what it reads)', () => {
    const pb = playbookOf(chain(1001).map((s) => (s.next ? { ...s, next: [{ step: s.next, when: '{{ true }}' }] } : s)));
    expect(entryStepCycle(pb)).toBeNull();
    expect(stepCycleProblem(pb, registrationPaths(pb))?.path).toBe('workflow[1000]');
  });

  it.each([1000, 5000])('registration refuses a chain of %i arcs between steps without tools from the graph: the machine\'s path and words', (n) => {
    const pb = playbookOf(chain(n));
    const read = entryStepCycle(pb);
    expect(read).toEqual(machineFirstEvent(pb));
    const report = registrationPaths(pb);
    expect(report.paths).toEqual([read]);
    expect(report.unreachable).toEqual(Array.from({ length: n + 1 - 1000 }, (_, i) => `s${1000 + i}`));
    expect(stepCycleProblem(pb, report)).toEqual({
      path: 'workflow[1000]',
      message: 'every run fails step_cycle at this step (more than 1000 steps entered without running a task; is there a cycle of steps without tools?): 1000 steps in a row run no task (s0 → … → s1000); give one of them a tool or a wait',
    });
  });
});
