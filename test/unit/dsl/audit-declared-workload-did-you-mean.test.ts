// A misspelt workload key is named with the one meant (`workload.tokn_url` beside `token_url`)
// when the playbook declares no inputs, but a playbook that declares `inputs:` (where a start may
// bring only what is declared) got no hint: `workload.limt` beside the input `limit` read only
// "the workload declares no 'limt' (declare it under workload: or inputs:, ...)".
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const problemsOf = (command: string) => {
  const r = parsePlaybook(`apiVersion: svc/v1
kind: Playbook
metadata: { name: w, path: w/w }
workload: { mode: fast }
inputs: { limit: { type: integer } }
workflow:
  - step: start
    tool: { kind: shell, command: "${command}" }
`);
  return r.ok ? [] : r.problems.map((p) => p.message);
};

it('names the declared key meant by a misspelt one', () => {
  expect(problemsOf('echo {{ workload.limt }}')).toEqual(["'workload.limt' is undefined: the workload declares no 'limt' (did you mean 'limit'?)"]);
  expect(problemsOf('echo {{ workload.mdoe }}')).toEqual(["'workload.mdoe' is undefined: the workload declares no 'mdoe' (did you mean 'mode'?)"]);
  expect(problemsOf('echo {{ workload.other }}')).toEqual(["'workload.other' is undefined: the workload declares no 'other' (declare it under workload: or inputs:, or use | default(...))"]);
});
