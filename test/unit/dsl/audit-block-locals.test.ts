// Registration refused templates that render: names bound inside a `{% filter %}` block or a
// `{% call %}` block (its `caller` parameters, a `for` or `set` in its body) were taken for
// undefined roots ("'user' is undefined"). What those blocks bind is now the template's own.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { renderValue } from '../../../src/dsl/render.ts';

const playbook = (command: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: blocks, path: t/blocks }
workflow:
  - step: start
    tool:
      kind: shell
      command: |
        ${command}
`;

describe('names bound inside filter and call blocks', () => {
  it.each([
    ['{% filter upper %}{% for x in ["a"] %}{{ x }}{% endfor %}{% endfilter %}', 'A'],
    ['{% filter upper %}{% set y = "b" %}{{ y }}{% endfilter %}', 'B'],
    ['{% macro m() %}{{ caller(1) }}{% endmacro %}{% call(user) m() %}u={{ user }}{% endcall %}', 'u=1'],
    ['{% macro m() %}{{ caller(1) }}{% endmacro %}{% call(user) m() %}{% for z in [user] %}{{ z }}{% endfor %}{% endcall %}', '1'],
    ['{% macro m(a) %}{{ caller() }}{% endmacro %}{% call m(1) %}{% set q = 2 %}{{ q }}{% endcall %}', '2'],
  ])('%s registers, as it renders', (template, rendered) => {
    expect(renderValue(template, {}, 'f')).toBe(rendered);
    const r = parsePlaybook(playbook(template));
    expect(r.ok ? [] : r.problems.map((p) => p.message)).toEqual([]);
  });

  it('a name nothing binds is still undefined, inside such blocks too', () => {
    for (const template of ['{% filter upper %}{{ nope }}{% endfilter %}', '{% macro m() %}{{ caller(1) }}{% endmacro %}{% call(user) m() %}{{ usr }}{% endcall %}']) {
      const r = parsePlaybook(playbook(template));
      expect(r.ok ? [] : r.problems.map((p) => p.message)).toEqual([expect.stringMatching(/^'(nope|usr)' is undefined/)]);
    }
  });
});
