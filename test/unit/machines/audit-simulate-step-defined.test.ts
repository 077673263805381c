// Found by the differential test (integration engine/simulator-differential, seeds 1010 and 1039):
// an arc `when: "{{ steps.s1 is defined and steps.s1.status == 'ok' }}"` stopped the simulation
// with depends_on_data (needs: [s1]) where the run took the arc. Whether a step has run is the
// machine's to know, as its status is (docs/playbook-dsl.md: "`when`s on `outcome.status` or
// `steps.X.status` need no example"); `is defined` of a step's outcome read it as its result.
// So did `'s1' in steps` (every step's result), and `outcome.error is none` on a failure the
// simulation chose (its code: but whether a step has an error is its status, known).
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

  it("is decided alike when it asks whether a step ran by name, or whether a step's error is none", () => {
    // A failure's error is never none and a success has none, whatever its code: the status says it.
    for (const [ran, failed] of [["'start' in steps", 'outcome.error is not none'], ["'late' not in steps and 'start' in steps", 'steps.start.error is defined and steps.start.error is not none']]) {
      const pb = YAML.replace("steps.start is defined and steps.start.status == 'ok'", `${ran} and outcome.error is none`).replace("steps.start is not defined or steps.start.status == 'error'", failed);
      expect(simulatePlaybook(pb)).toMatchObject({ status: 'completed', path: ['start', 'after'] });
      expect(simulatePlaybook(pb, { start: 'error' })).toMatchObject({ status: 'completed', path: ['start', 'recover'] });
    }
  });

  it("still depends on data when it tests a field of the step's result", () => {
    // A shell task's result: a noop's is null in every run, which the simulation knows.
    const pb = YAML.replace('kind: noop', "kind: shell, command: 'true'").replace("steps.start is defined and steps.start.status == 'ok'", 'steps.start.result.x is defined');
    expect(simulatePlaybook(pb)).toMatchObject({ status: 'depends_on_data', undecided: { step: 'start', at: 'next', needs: ['start'] } });
  });
});
