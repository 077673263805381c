// `examples:` is keyed by step name, and only simulation reads it: an example for a misspelt or
// removed step (`strat:`) was stored and never used, without a word, where `svc simulate --result
// strat=...` is refused naming it. It is now a problem at examples.<name>, with the step meant.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (examples: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ex, path: t/ex }
workflow:
  - step: start
    tool: { kind: noop }
    next: report
  - step: report
    tool: { kind: noop }
examples:
${examples}
`;

describe('examples: for steps the workflow has', () => {
  it('refuses an example of no step, naming the one meant, at its line', () => {
    const r = parsePlaybook(playbook('  start: { ok: true }\n  strat: { x: 1 }\n  "no such": 2'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      { path: 'examples.strat', message: "no step 'strat' in the workflow (did you mean 'start'?)", line: 12, column: 3 },
      { path: 'examples["no such"]', message: "no step 'no such' in the workflow", line: 13, column: 3 },
    ]);
  });

  it('takes examples of its steps as before', () => {
    const r = parsePlaybook(playbook('  start: { ok: true }\n  report: null'));
    expect(r.ok).toBe(true);
  });
});
