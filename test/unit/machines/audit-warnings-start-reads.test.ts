// Registration warns only of what is certain (docs/playbook-dsl.md, Simulating). A branch on the
// start's `args`, on the workload read whole, or on `execution` (run as a child or not) is taken
// by some start: registration ran every such playbook as one top-level start with an empty
// payload and warned 'no path reaches step ...' of the other branch.
import { describe, expect, it } from 'vitest';
import { playbookFromYaml, playbookWarnings, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { undecidedText } from '../../../machines/simulation-data.ts';

const branch = (when: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: start_reads, path: audit/start-reads }
workload: { a: 1 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next:
      - { step: taken, when: "${when}" }
      - { step: other }
  - step: taken
    tool: { name: t, kind: noop }
  - step: other
    tool: { name: t, kind: noop }
`;

describe('registration warnings on a branch over what a start decides', () => {
  it.each([
    ["a start's args", "{{ args.mode is defined and args.mode == 'fast' }}"],
    ['the workload read whole', "{{ 'debug' in workload }}"],
    ['the workload by a computed key', "{{ workload['de' ~ 'bug'] is defined }}"],
    ['where the execution runs', '{{ execution.parent_id is not none }}'],
  ])('warns of no step when the branch reads %s', (_, when) => {
    expect(playbookWarnings(playbookFromYaml(branch(when)))).toEqual([]);
  });

  it('simulates args as a start gives them, and says so when none are given', () => {
    const yaml = branch("{{ args.mode == 'fast' }}");
    expect(simulatePlaybook(yaml, {}, { payload: { mode: 'fast' } })).toMatchObject({ status: 'completed', path: ['start', 'taken'] });
    expect(simulatePlaybook(yaml, {}, { payload: { mode: 'slow' } })).toMatchObject({ status: 'completed', path: ['start', 'other'] });
    const blind = simulatePlaybook(yaml);
    expect(blind).toMatchObject({ status: 'depends_on_data', path: ['start'], undecided: { step: 'start', at: 'next', needs: [], args: ['mode'] } });
    expect(undecidedText(blind.undecided!)).toBe('the next step after start depends on data: no value of args.mode (a start gives it)');
  });

  it('still warns of a step no start reaches', () => {
    const yaml = branch('{{ false }}');
    expect(playbookWarnings(playbookFromYaml(yaml))).toEqual(['workflow.taken: no path reaches step taken (every command simulated ok or error)']);
  });
});
