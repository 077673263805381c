// The console's simulator keeps the outcomes a person chose per step. For a step named like a
// property every object inherits (`constructor`, `toString`), a plain lookup of what was chosen
// before found the inherited function and kept it as the first outcome: the step's first answer
// was that function, which the simulation took for a failure, whatever the person clicked.
import { describe, expect, it } from 'vitest';
import { withOutcome } from '../../../gui/src/graph/with-outcome.ts';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: inherited, path: audit/simulator-inherited-names }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: [ { step: recover, when: "{{ outcome.status == 'error' }}" }, { step: toString } ]
  - step: toString
    tool: { name: t, kind: noop }
  - step: recover
`;

describe("the console simulator's choices", () => {
  it('records the first outcome chosen for a step named like an inherited property', () => {
    expect(withOutcome({}, 'constructor', 'ok')).toEqual({ constructor: ['ok'] });
    expect(withOutcome(withOutcome({}, 'toString', 'ok'), 'toString', 'error')).toEqual({ toString: ['ok', 'error'] });
  });

  it('answers such a step with what the person clicked', () => {
    const chosen = withOutcome(withOutcome({}, 'start', 'ok'), 'toString', 'ok');
    expect(simulatePlaybook(YAML, chosen, { pauseWhenUndecided: true })).toMatchObject({ status: 'completed', path: ['start', 'toString'], waiting: [] });
  });
});
