// A loop's iterator could be named `constructor`, `__proto__` or another name no template may read:
// `{{ constructor }}` passed registration and failed every run ("not accessible in templates"), and
// `__proto__` set the render context's prototype to the item. Such an iterator is now a problem.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (iterator: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: it, path: t/it }
workflow:
  - step: start
    loop: { in: "{{ [1, 2] }}", iterator: ${iterator} }
    tool: { kind: shell, command: "echo {{ loop.item }}" }
`;

describe('a loop iterator named what templates cannot read', () => {
  it.each(['constructor', '__proto__', 'prototype', '__defineGetter__'])('%s is a problem at loop.iterator, with its place', (name) => {
    const r = parsePlaybook(playbook(name));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([expect.objectContaining({ path: 'workflow[0].loop.iterator', line: 6, message: expect.stringContaining('templates cannot read') })]);
  });

  it('other names stay as they were', () => {
    for (const name of ['item', 'row', 'proto', '_x']) expect(parsePlaybook(playbook(name)).ok).toBe(true);
  });
});
