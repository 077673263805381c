// simulatePlaybook and playbookPaths, called from a user's test as docs/playbook-dsl.md shows,
// took what `svc simulate` refuses: outcomes or results naming a step the playbook lacks (a
// misspelt name silently simulated every step ok, so a test of the error path passed without
// one) and a payload a start refuses (422 invalid_inputs: the simulation ran a start that cannot
// happen). Both now throw an Error saying what is wrong, as the CLI's usage errors say it.
import { describe, expect, it } from 'vitest';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: refuses, path: audit/simulate-refuses }
inputs:
  target: { type: string, required: true }
  mode: { type: string, enum: [fast, slow], default: fast }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: [ { step: recover, when: "{{ outcome.status == 'error' }}" }, { step: report } ]
  - step: recover
    tool: { name: t, kind: noop }
  - step: report
    tool: { name: t, kind: noop }
`;

describe('a simulation asked for what cannot be', () => {
  it('refuses outcomes or results for a step the playbook lacks', () => {
    expect(() => simulatePlaybook(YAML, { strat: 'error' })).toThrow('outcomes name no step of the playbook: strat');
    expect(() => simulatePlaybook(YAML, {}, { results: { reprot: {} } })).toThrow('results name no step of the playbook: reprot');
    expect(() => playbookPaths(YAML, { results: { reprot: {} } })).toThrow('results name no step of the playbook: reprot');
  });

  it('refuses a payload a start refuses, naming each field', () => {
    expect(() => simulatePlaybook(YAML, {}, { payload: { target: 1 } })).toThrow(/^a start with this payload is refused \(invalid_inputs\): workload\.target: must be string, got integer/);
    expect(() => simulatePlaybook(YAML, {}, { payload: { target: 'a', mode: 'warp' } })).toThrow(/invalid_inputs.*workload\.mode/);
    expect(() => playbookPaths(YAML, { payload: { target: 1 } })).toThrow(/invalid_inputs/);
  });

  it('simulates what a start takes: a required input left out is what another start gives', () => {
    expect(simulatePlaybook(YAML, { start: 'error' })).toMatchObject({ status: 'completed', path: ['start', 'recover'] });
    expect(simulatePlaybook(YAML, {}, { payload: { target: 'a', mode: 'slow' } })).toMatchObject({ status: 'completed', path: ['start', 'report'] });
  });
});
