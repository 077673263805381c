// A `workload:` value whose input has a `default` is never seen by a run: a start's workload is
// the block, the inputs' defaults over it, then the payload. Registration checked such a value
// against nothing and said nothing, so `workload: {mode: fast}` beside `inputs: {mode: {default:
// slow}}` ran slow while the document read fast. It is a warning now, at workload.<name>.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (workload: string, inputs: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: shadowed, path: audit/shadowed }
workload: ${workload}
inputs: ${inputs}
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo {{ workload.mode }}" }
`;

function warningsOf(text: string): string[] {
  const parsed = parsePlaybook(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.warnings;
}

describe('a workload value an input default goes over', () => {
  it('is a warning naming the default that wins', () => {
    expect(warningsOf(playbook('{ mode: fast, n: [1, 2] }', '{ mode: { type: string, default: slow }, n: { type: array, default: [3] } }'))).toEqual([
      'workload.mode: has no effect: the default of inputs.mode ("slow") goes over it, and a start\'s payload over both (drop one of the two)',
      'workload.n: has no effect: the default of inputs.n ([3]) goes over it, and a start\'s payload over both (drop one of the two)',
    ]);
  });

  it('is no warning when the values are the same, the input has no default or none is declared', () => {
    expect(warningsOf(playbook('{ mode: slow }', '{ mode: { type: string, default: slow } }'))).toEqual([]);
    expect(warningsOf(playbook('{ mode: fast }', '{ mode: { type: string } }'))).toEqual([]);
    expect(warningsOf(playbook('{ mode: fast }', '{ other: { type: string, default: x } }'))).toEqual([]);
  });
});
