// A step may be named anything but `__proto__` (docs/playbook-dsl.md, Steps), so also like a
// property every object inherits: `constructor`, `toString`, `valueOf`. The simulation looked a
// step's chosen outcome up with a plain `outcomes[step]`, which for such a name is the inherited
// function: taken for a chosen outcome that is not `ok`, the step failed in every simulation
// (svc simulate, the console's simulator, a user's test) where a run completes it, and stepping
// through it the console never asked for its outcome.
import { describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';

const YAML = (name: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: inherited, path: audit/simulate-inherited-names }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: ${JSON.stringify(name)}
  - step: ${JSON.stringify(name)}
    tool: { name: t, kind: noop }
    next: [ { step: recover, when: "{{ outcome.status == 'error' }}" }, { step: report } ]
  - step: recover
  - step: report
`;

describe('a step named like an inherited property', () => {
  for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
    it(`${name}: ends as its chosen outcome says (ok when none is chosen)`, () => {
      expect(simulatePlaybook(YAML(name))).toMatchObject({ status: 'completed', path: ['start', name, 'report'], error: null });
      expect(simulatePlaybook(YAML(name), { [name]: 'error' })).toMatchObject({ status: 'completed', path: ['start', name, 'recover'] });
    });

    it(`${name}: step by step, the simulation waits for its outcome to be chosen`, () => {
      const r = simulatePlaybook(YAML(name), { start: 'ok' }, { pauseWhenUndecided: true });
      expect(r).toMatchObject({ status: 'running', path: ['start', name], waiting: [name] });
    });
  }
});
