// A whole number past ±(2^53 − 1) in a playbook (an account id in `workload:`) was stored with
// other digits, silently: 12345678901234567890 ran as 12345678901234567000. It is now a problem at
// its place, saying to quote it; numbers JSON keeps, and the same digits quoted, register as before.
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (workload: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: big, path: t/big }
workload:
${workload}
workflow:
  - step: start
    tool: { kind: noop }
`;

it('refuses a whole number past 2^53 - 1 at its line and column, saying to quote it', () => {
  const r = parsePlaybook(playbook('  safe: 9007199254740991\n  account: 12345678901234567890\n'));
  expect(r.ok ? [] : r.problems).toEqual([{ path: 'workload.account', message: expect.stringContaining('quote it to keep it as text'), line: 6, column: 3 }]);
  const negative = parsePlaybook(playbook('  ids: [1, -9007199254740993]\n'));
  expect(negative.ok ? [] : negative.problems.map((p) => p.path)).toEqual(['workload.ids[1]']);
});

it('registers numbers a JSON number keeps, and big ones quoted as text', () => {
  for (const workload of ['  max: 9007199254740991\n  min: -9007199254740991\n', '  account: "12345678901234567890"\n', '  ratio: 1.5e-7\n  pi: 3.14159265358979\n']) {
    const r = parsePlaybook(playbook(workload));
    expect(r.ok ? [] : r.problems, workload).toEqual([]);
  }
});
