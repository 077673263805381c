// `tool:` takes a task or a list of tasks, `next:` a step name, a list of arcs or {mode, arcs}, and
// an arc a step name or {step, when?, set?}. A value of none of these shapes was named by one of
// them only: `tool: noop` read 'must be one of Object, got "noop"', `next: 5` 'expected Object,
// got 5', as if a mapping were the only form.
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

it('names every form a tool, next and arc may take', () => {
  const r = parsePlaybook(`apiVersion: svc/v1
kind: Playbook
metadata: { name: s, path: s/s }
workflow:
  - step: start
    tool: noop
    next: 5
  - step: b
    next: [c, 7]
  - step: c
    tool: [noop]
`);
  expect(r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
    'workflow[0].tool: must be a task (a mapping with its kind) or a list of tasks, got "noop"',
    'workflow[0].next: must be a step name, a list of arcs or {mode, arcs}, got 5',
    'workflow[1].next[1]: must be a step name or an arc {step, when?, set?}, got 7',
    'workflow[2].tool[0]: must be a task (a mapping with its kind), got "noop"',
  ]);
});
