import { describe, expect, it } from 'vitest';
import { createActor, initialTransition, transition, type AnyStateMachine } from 'xstate';
import { pureInitialTransition, pureReplay, pureRestore, pureTransition } from '../../../actors/pure-transition.ts';
import { createExecutionMachine } from '../../../machines/execution.machine.ts';
import { effectsOf, inputOf, ok, playbookOf, shell } from '../machines/helpers.ts';

// pureTransition is xstate's public transition(); it must return exactly what transition()
// returns, no call may see another call's actions, and the throwaway actor transition() builds
// per call must not enter the step regions (the machine refuses to start without input).
describe('pureTransition', () => {
  const machine = createExecutionMachine(playbookOf([{ step: 'a', tool: shell('x'), next: 'b' }, { step: 'b', tool: shell('y') }]));
  const view = (s: { value: unknown; context: unknown; status: string }) => ({ value: s.value, context: s.context, status: s.status });

  it('gives the snapshots and effects of xstate transition(), step by step', () => {
    const [s0, a0] = initialTransition(machine, inputOf());
    const [p0, b0] = pureInitialTransition(machine, inputOf());
    expect(view(p0)).toEqual(view(s0));
    expect(effectsOf(b0)).toEqual(effectsOf(a0));

    const events = [
      { type: 'command.completed', seq: 1, tasks: { x: ok(1) } },
      { type: 'command.completed', seq: 2, tasks: { y: ok(2) } },
    ] as const;
    let s = s0;
    let p = p0;
    for (const ev of events) {
      const [sn, sa] = transition(machine, s, ev);
      const [pn, pa] = pureTransition(machine, p, ev);
      expect(view(pn)).toEqual(view(sn));
      expect(effectsOf(pa)).toEqual(effectsOf(sa));
      expect(effectsOf(pa).length).toBeGreaterThan(0);
      s = sn;
      p = pn;
    }
    expect(p.status).toBe('done');
  });

  it('returns only the actions of its own call, and an event that changes nothing returns none', () => {
    const [p0, first] = pureInitialTransition(machine, inputOf());
    const [, again] = pureInitialTransition(machine, inputOf({ executionId: 102, rootExecutionId: 102 }));
    expect(effectsOf(again)).toHaveLength(effectsOf(first).length);
    expect(first).not.toBe(again);
    const [same, none] = pureTransition(machine, p0, { type: 'command.completed', seq: 99, tasks: {} });
    expect(none).toEqual([]);
    expect(view(same)).toEqual(view(p0));
  });

  it('restores a stored snapshot (value and context as JSON) once: a replay and the next transition go on from it as from the live one', () => {
    const [p0] = pureInitialTransition(machine, inputOf());
    const stored = JSON.parse(JSON.stringify({ value: p0.value, context: p0.context }));
    const restored = pureRestore(machine, stored);
    expect(view(restored)).toEqual(view(machine.resolveState(stored)));
    expect(pureReplay(machine, restored, [])).toBe(restored);
    const ev = { type: 'command.completed', seq: 1, tasks: { x: ok(1) } } as const;
    const [live, liveActions] = pureTransition(machine, p0, ev);
    const [next, nextActions] = pureTransition(machine, restored, ev);
    expect(view(next)).toEqual(view(live));
    expect(effectsOf(nextActions)).toEqual(effectsOf(liveActions));
    const [sn] = transition(machine, machine.resolveState(stored), ev);
    expect(view(next)).toEqual(view(sn));
  });

  it('does not start an execution without input: the throwaway actor of each call enters no step', () => {
    const anyLogic: AnyStateMachine = machine; // as transition() builds it: no input
    const snapshot = createActor(anyLogic).getSnapshot();
    expect(snapshot.status).toBe('error');
    expect(pureInitialTransition(machine, inputOf())[0].status).toBe('active');
  });
});
