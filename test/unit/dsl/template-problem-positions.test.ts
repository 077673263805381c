// A template that does not parse was placed at its field's key (`command:`), whatever line of a
// block scalar the mistake was on; the message's own "(line 2, column 22)" counted in the template.
// Now a problem's line and column are the mistake's place in the document wherever the value's
// source shows its text as is (a literal block, a plain or quoted scalar without escapes), and the
// key's place otherwise (a folded block, escapes).
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const HEAD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: p, path: a/p }
workflow:
  - step: start
`;

/** The one problem of `body` (after HEAD): its path, line and column, and the document's line there. */
function placed(body: string): { path: string; line: number; column: number; at: string } {
  const text = HEAD + body;
  const parsed = parsePlaybook(text);
  if (parsed.ok) throw new Error('expected a problem');
  expect(parsed.problems).toHaveLength(1);
  const [{ path, line, column }] = parsed.problems;
  expect(parsed.problems[0]).not.toHaveProperty('within');
  return { path, line: line!, column: column!, at: text.split('\n')[line! - 1].slice(column! - 1) };
}

describe('a template problem is placed where the mistake is', () => {
  it('in a literal block, on its line and column', () => {
    const p = placed(`    tool:
      name: x
      kind: shell
      command: |
        echo one
        echo {{ workload.x | }}
`);
    expect(p).toMatchObject({ path: 'workflow[0].tool.command', line: 11, column: 30 });
    expect(p.at).toBe('}}');
  });

  it('in a plain and in a quoted scalar, on its column', () => {
    expect(placed(`    tool:\n      name: x\n      kind: shell\n      command: echo {{ workload.x | nosuch }}\n`)).toMatchObject({ line: 9, at: 'nosuch }}' });
    expect(placed(`    tool: { name: x, kind: shell, command: "echo {{ workload.x | nosuch }}" }\n`)).toMatchObject({ line: 6, at: 'nosuch }}" }' });
  });

  it('in a condition written without braces, on its column', () => {
    const p = placed(`    tool: { name: x, kind: noop }
    next:
      - { step: end, when: "steps.start is nosuchtest" }
  - step: end
    tool: { name: y, kind: noop }
`);
    expect(p).toMatchObject({ path: 'workflow[0].next[0].when', line: 8 });
    expect(p.at).toMatch(/^nosuchtest/);
  });

  it('at its key where the source is not the text (folded, escaped)', () => {
    expect(placed(`    tool: { name: x, kind: shell, command: 'it''s {{ x | nosuch }}' }\n`)).toMatchObject({ line: 6, at: "command: 'it''s {{ x | nosuch }}' }" });

    expect(placed(`    tool:
      name: x
      kind: shell
      command: >
        echo one
        echo {{ workload.x | }}
`)).toMatchObject({ line: 9, column: 7 });
    expect(placed(`    tool: { name: x, kind: shell, command: "a\\tb {{ x | nosuch }}" }\n`)).toMatchObject({ line: 6, at: 'command: "a\\tb {{ x | nosuch }}" }' });
  });
});
