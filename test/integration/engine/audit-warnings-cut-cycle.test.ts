// Registration warned 'no path reaches step done' for a playbook whose run reaches it: a counter
// cycle (`a` again while vars.n < 20, then `done`) runs `a` 21 times, past the cut of the
// simulated paths (5 step runs per step of the playbook), so no simulated path reached `done`,
// and a step no path reached was called unreachable, though the warnings are "only what is
// certain". The machine (simulatePlaybook, and the server below) goes through `done`. A step the
// paths did not reach is now unreachable only when no path was cut, or when no arc leads to it
// from the entry at all (it cannot lie past a cut).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const COUNTER = `apiVersion: svc/v1
kind: Playbook
metadata: { name: counter, path: audit/counter }
workflow:
  - step: a
    tool: { name: t, kind: noop }
    next:
      - { step: a, when: "{{ (vars.n | default(0)) < 20 }}", set: { n: "{{ (vars.n | default(0)) + 1 }}" } }
      - { step: done }
  - step: done
    tool: { name: t, kind: noop }
`;
// A step no arc leads to is unreachable whatever a cut hides. (Its cycle waits on a timer, which
// only fires: one path, cut, where a task's ok and error would make too many to check.)
const WITH_ORPHAN = `apiVersion: svc/v1
kind: Playbook
metadata: { name: counter_orphan, path: audit/counter-orphan }
workflow:
  - step: a
    wait: { for: 0.01 }
    next:
      - { step: a, when: "{{ (vars.n | default(0)) < 20 }}", set: { n: "{{ (vars.n | default(0)) + 1 }}" } }
      - { step: done }
  - step: done
    tool: { name: t, kind: noop }
  - step: orphan
    tool: { name: t, kind: noop }
`;

const entered = (events: { event_type: string; step?: string | null }[]) => events.filter((e) => e.event_type === 'step.enter').map((e) => e.step);

describe('a step past the simulated paths\' cut', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ workers: 1 });
  }, 120_000);
  afterAll(async () => s?.close());

  it('is not called unreachable: the run reaches it, as the simulation does', async () => {
    const reg = await s.register(COUNTER);
    expect(reg.warnings).not.toContainEqual(expect.stringContaining('no path reaches step done'));
    const id = await s.run('audit/counter');
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const real = entered(await s.events(id));
    expect(real.at(-1)).toBe('done');
    expect(real).toHaveLength(22);
    expect(simulatePlaybook(COUNTER)).toMatchObject({ status: 'completed', path: real });
    expect(playbookPaths(COUNTER).unreachable).toEqual([]);
  }, 60_000);

  it('a step no arc leads to is still unreachable', async () => {
    const reg = await s.register(WITH_ORPHAN);
    expect(reg.warnings).toContainEqual(expect.stringContaining('no path reaches step orphan'));
    expect(reg.warnings).not.toContainEqual(expect.stringContaining('no path reaches step done'));
    expect(playbookPaths(WITH_ORPHAN).unreachable).toEqual(['orphan']);
  }, 60_000);
});
