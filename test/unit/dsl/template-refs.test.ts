import { describe, expect, it } from 'vitest';
import { templateRefs } from '../../../src/dsl/template-refs.ts';

const refs = (v: unknown) => {
  const r = templateRefs(v);
  return { roots: [...r.roots].sort(), steps: r.steps === 'all' ? 'all' : [...r.steps].sort() };
};

describe('templateRefs', () => {
  it('finds the roots read anywhere in a value, and steps named literally', () => {
    expect(
      refs({
        url: '{{ workload.base }}/users',
        headers: { a: 'Bearer {{ keychain.api.token }}' },
        body: ['{{ steps.fetch.result.body }}', "{{ steps['load'].result }}", { n: '{{ vars.n + 1 }}' }],
        plain: 'no template here',
      }),
    ).toEqual({ roots: ['keychain', 'steps', 'vars', 'workload'], steps: ['fetch', 'load'] });
  });

  it('reads every step when steps is used as a whole or with a computed name', () => {
    expect(refs('{{ steps | length }}').steps).toBe('all');
    expect(refs('{{ steps[vars.which].result }}').steps).toBe('all');
    expect(refs('{% for name, s in steps %}{{ name }}{% endfor %}').steps).toBe('all');
  });

  it('sees through statements, filters and loops', () => {
    expect(refs("{% if args.flag %}{{ workload.x | default('y') }}{% endif %}{% for r in steps.a.result %}{{ r.id }}{% endfor %}")).toEqual({
      roots: ['args', 'r', 'steps', 'workload'],
      steps: ['a'],
    });
  });

  it('a template that does not parse reads everything', () => {
    expect(refs('{{ workload.x ')).toEqual({ roots: ['args', 'steps', 'vars', 'workload'], steps: 'all' });
  });

  it('a value without templates reads nothing', () => {
    expect(refs({ command: 'echo hi', n: 3, list: [null, true] })).toEqual({ roots: [], steps: [] });
  });
});
