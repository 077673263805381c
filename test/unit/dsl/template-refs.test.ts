import { describe, expect, it } from 'vitest';
import { templateDataReads } from '../../../src/dsl/template-data-reads.ts';
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

  it('reads the target and the bounds of a slice', () => {
    expect(refs('{{ steps.a.result[vars.from:args.to:workload.step] }}')).toEqual({ roots: ['args', 'steps', 'vars', 'workload'], steps: ['a'] });
    expect(refs('{{ steps[1:] }}').steps).toBe('all');
    expect([...templateRefs('{{ keychain.api.token[:4] }}').keychain]).toEqual(['api']);
  });

  it('a template that does not parse reads everything', () => {
    expect(refs('{{ workload.x ')).toEqual({ roots: ['args', 'steps', 'vars', 'workload'], steps: 'all' });
  });

  it('a value without templates reads nothing', () => {
    expect(refs({ command: 'echo hi', n: 3, list: [null, true] })).toEqual({ roots: [], steps: [] });
  });
});

describe('templateDataReads', () => {
  it('a slice reads its target and bounds; a slice of a status reads no data', () => {
    expect(templateDataReads('{{ steps.a.result[:10] }}')).toEqual({ steps: new Set(['a']), allSteps: false, own: false, vars: false, workload: new Set(), args: new Set(), start: new Set(), tasks: [] });
    expect(templateDataReads('{{ steps.a.status[:2] }}')).toEqual({ steps: new Set(), allSteps: false, own: false, vars: false, workload: new Set(), args: new Set(), start: new Set(), tasks: [] });
    expect(templateDataReads('{{ workload.x[vars.n:outcome.data.k] }}')).toEqual({ steps: new Set(), allSteps: false, own: true, vars: true, workload: new Set(['x']), args: new Set(), start: new Set(), tasks: [] });
    expect(templateDataReads('{{ steps[1:] }}').allSteps).toBe(true);
  });

  it('names the workload values read by name; the workload read whole names none', () => {
    expect(templateDataReads(['{{ workload.go and workload["region"] == "eu" }}', { k: '{{ workload.tenant | default("x") }}' }]).workload).toEqual(new Set(['go', 'region', 'tenant']));
    expect(templateDataReads('{{ workload | tojson }}').workload).toEqual(new Set());
    expect(templateDataReads('{{ workload | tojson }}').start).toEqual(new Set(['workload']));
    expect(templateDataReads('{{ args.mode ~ args["x"] ~ execution.parent_id }}')).toMatchObject({ args: new Set(['mode', 'x']), start: new Set(['execution']) });
  });
});
