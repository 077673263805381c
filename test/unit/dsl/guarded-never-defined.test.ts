// A read under `| default` or `is defined` is exempt from registration's strict check (it may be
// absent at a run), but some can be defined at no run at all: a root the place does not have
// (`outcome` in a task's field, always ''), a misspelt root, a step, `vars` key, earlier task or
// `execution` field that does not exist. Registration stored those in silence, and the guard
// always took its undefined side; it now answers a warning for each, naming its place. What a
// start or an earlier step may bring stays silent.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (env: string, when = "{{ outcome.status == 'ok' }}") => `apiVersion: svc/v1
kind: Playbook
metadata: { name: w, path: w/w }
workflow:
  - step: a
    tool:
      - { name: first, kind: shell, command: "true" }
      - { name: t, kind: shell, command: "echo", env: { V: "${env}" } }
    next: [ { step: b, when: "${when}" }, { step: b } ]
  - step: b
    tool: { name: t, kind: noop }
`;

const warningsOf = (yaml: string): string[] => {
  const r = parsePlaybook(yaml);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.warnings;
};

describe('guarded reads that are never defined', () => {
  it.each([
    ["{{ outcome.error.message | default('') }}", "'outcome' is never defined here (a task's field reads"],
    ["{{ wrkload.x | default('') }}", "'wrkload' is never defined here (no root or variable is named 'wrkload' (did you mean 'workload'?))"],
    ["{{ steps.nope.result | default('') }}", "'steps.nope' is never defined here (there is no step 'nope')"],
    ['{{ vars.n | default(0) }}', "'vars.n' is never defined here (no arc sets 'n')"],
    ["{{ tasks.later.stdout | default('') }}", "'tasks.later' is never defined here (no task 'later' runs before this one in step 'a')"],
    ['{{ execution.idd | default(1) }}', "'execution.idd' is never defined here (execution has id, path"],
    ["{{ 'x' if outcome is defined else 'y' }}", "'outcome' is never defined here"],
  ])('%s is registered with a warning naming its place', (template, message) => {
    const warnings = warningsOf(playbook(template));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].startsWith(`workflow[0].tool[1].env.V: ${message}`)).toBe(true);
    expect(warnings[0]).toMatch(/its \| default\(\.\.\.\) or is defined always takes the undefined side$/);
  });

  it("warns of an arc's when reading what an arc never has", () => {
    expect(warningsOf(playbook('x', '{{ keychain.token is defined }}'))).toEqual([
      "workflow[0].next[0].when: 'keychain' is never defined here (an arc's when reads workload, args, vars, steps, execution, outcome, signal): its | default(...) or is defined always takes the undefined side",
    ]);
  });

  it('says nothing of what a start, an earlier step or task may bring', () => {
    for (const template of ["{{ workload.maybe | default('') }}", "{{ steps.b.result | default('') }}", "{{ tasks.first.stdout | default('') }}", "{{ execution.parent_id | default('') }}", "{{ keychain.token.value | default('') }}"]) {
      expect(warningsOf(playbook(template)), template).toEqual([]);
    }
  });
});
