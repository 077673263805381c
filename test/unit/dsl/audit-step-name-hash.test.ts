// A step's state in the playbook's statechart is named after the step, and xstate reads a state
// key starting with `#` as a state id. A step named `#1` registered without a problem, but the
// machine could not resolve its own state value once the step was in it: an execution that reached
// it (a parallel playbook: at its start) never moved again and stayed `running` for ever, and
// svc simulate and the console's simulator threw ("Child state node '#1' does not exist").
// Registration now refuses such a name, naming the field; a `#` anywhere else is fine.
import { describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const YAML = (name: string, mode: 'exclusive' | 'inclusive') => `apiVersion: svc/v1
kind: Playbook
metadata: { name: hash, path: audit/step-name-hash }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: { mode: ${mode}, arcs: [ { step: ${JSON.stringify(name)} }, { step: other } ] }
  - step: ${JSON.stringify(name)}
    tool: { name: t, kind: noop }
  - step: other
`;

describe('a step name starting with #', () => {
  for (const mode of ['exclusive', 'inclusive'] as const) {
    it(`is a problem at registration, at the step's name (${mode})`, () => {
      const r = parsePlaybook(YAML('#1', mode));
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.problems).toEqual([expect.objectContaining({ path: 'workflow[1].step', line: 8, message: expect.stringContaining('must not start with #') })]);
    });

    it(`a # elsewhere in the name runs (${mode})`, () => {
      expect(parsePlaybook(YAML('step #1', mode)).ok).toBe(true);
      expect(simulatePlaybook(YAML('step#1', mode))).toMatchObject({ status: 'completed', path: expect.arrayContaining(['start', 'step#1']) });
    });
  }
});
