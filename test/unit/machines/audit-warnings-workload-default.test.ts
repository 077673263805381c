// Registration warns only of what is certain (docs/playbook-dsl.md, Simulating). A start's payload
// goes over the playbook's `workload:` values and its inputs' defaults, so a branch on one of them
// is taken by a start that gives another value: its steps are not unreachable. The check ran the
// playbook with its defaults as if every start kept them and warned 'no path reaches step slow'.
import { describe, expect, it } from 'vitest';
import { playbookFromYaml, playbookWarnings, simulatePlaybook } from '../../../machines/simulate-playbook.ts';

const playbook = (defaults: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: mode, path: audit/mode }
${defaults}
workflow:
  - step: start
    next:
      - { step: slow, when: "{{ workload.mode == 'slow' }}" }
      - { step: fast }
  - step: slow
  - step: fast
`;

describe('registration warnings on a branch over a defaulted workload value', () => {
  it.each([
    ['a workload: value', 'workload: { mode: fast }'],
    ["an input's default", 'inputs: { mode: { type: string, default: fast } }'],
    ["an input's default within its enum", 'inputs: { mode: { type: string, enum: [fast, slow], default: fast } }'],
  ])('warns of no step when the branch reads %s', (_, defaults) => {
    const pb = playbookFromYaml(playbook(defaults));
    expect(playbookWarnings(pb)).toEqual([]);
    // A start that gives the other value takes the branch the warning called unreachable.
    expect(simulatePlaybook(pb, {}, { payload: { mode: 'slow' } })).toMatchObject({ status: 'completed', path: ['start', 'slow'] });
    // svc simulate still runs with the defaults when no payload says otherwise.
    expect(simulatePlaybook(pb)).toMatchObject({ status: 'completed', path: ['start', 'fast'] });
  });

});
