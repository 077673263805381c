// A name or step a template reads that does not exist is refused at registration; when a known one
// is close, the problem says which was meant, as unknown fields and workload keys do.
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const messages = (text: string): string[] => {
  const r = parsePlaybook(text);
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
};

it("a misspelt loop iterator and step name get 'did you mean'; a name close to nothing does not", () => {
  expect(
    messages(`apiVersion: svc/v1
kind: Playbook
metadata: { name: x, path: t/x }
workload: { items: [] }
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: user }
    tool: { name: a, kind: shell, command: "echo {{ usr.name }} {{ zzzzzz }}" }
    next: check
  - step: check
    tool: { name: b, kind: shell, command: "echo {{ steps.strat.result }}" }
`),
  ).toEqual([
    "workflow[0].tool.command: 'usr' is undefined (did you mean 'user'?)",
    "workflow[0].tool.command: 'zzzzzz' is undefined",
    "workflow[1].tool.command: 'steps.strat' is undefined: there is no step 'strat' (did you mean 'start'?)",
  ]);
});
