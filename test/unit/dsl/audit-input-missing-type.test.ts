// An input declared without its `type` (`inputs: { limit: {} }`) is a missing field like any
// other, but the problem read `inputs.limit.type: expected "type", got undefined` (valibot's text
// for a missing key, re-issued by the inputs' record, which loses what marks it as missing).
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

it('names an input without a type as a missing field', () => {
  const r = parsePlaybook(`apiVersion: svc/v1
kind: Playbook
metadata: { name: i, path: i/i }
inputs:
  limit: { description: "rows to read" }
workflow:
  - step: start
`);
  expect(r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual(['inputs.limit.type: is required']);
});
