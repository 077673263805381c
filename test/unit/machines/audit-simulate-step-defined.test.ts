// Found by the differential test (integration engine/simulator-differential, seeds 1010 and 1039):
// an arc `when: "{{ steps.s1 is defined and steps.s1.status == 'ok' }}"` stopped the simulation
// with depends_on_data (needs: [s1]) where the run took the arc. Whether a step has run is the
// machine's to know, as its status is (docs/playbook-dsl.md: "`when`s on `outcome.status` or
// `steps.X.status` need no example"); `is defined` of a step's outcome read it as its result.
import { describe, expect, it } from 'vitest';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: step_defined, path: audit/simulate-step-defined }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next:
      - { step: late, when: "{{ steps.late is defined }}" }
      - { step: after, when: "{{ steps.start is defined and steps.start.status == 'ok' }}" }
      - { step: recover, when: "{{ steps.start is not defined or steps.start.status == 'error' }}" }
  - step: after
  - step: recover
  - step: late
`;

describe("an arc testing whether a step's outcome is defined", () => {
  it('is decided by the simulation as the run decides it, with no example', () => {
    expect(simulatePlaybook(YAML)).toMatchObject({ status: 'completed', path: ['start', 'after'] });
    expect(simulatePlaybook(YAML, { start: 'error' })).toMatchObject({ status: 'completed', path: ['start', 'recover'] });
    const report = playbookPaths(YAML);
    expect(report.paths.map((p) => p.status)).toEqual(['completed', 'completed']);
    expect(report.unreachable).toEqual(['late']);
  });

  it("still depends on data when it tests a field of the step's result", () => {
    const pb = YAML.replace("steps.start is defined and steps.start.status == 'ok'", 'steps.start.result.x is defined');
    expect(simulatePlaybook(pb)).toMatchObject({ status: 'depends_on_data', undecided: { step: 'start', at: 'next', needs: ['start'] } });
  });
});
