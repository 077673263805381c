// `x in list`, `==` between lists, `is in`, `select('in', ...)`, a list's `index`/`count` and
// `unique` compared item by item without paying the render budget (unique pairwise): a loop of
// `-1 in xs` over 100,000 items ran 20 s, `range(100000) | list | unique` 15 s, under a 1,000,000-step bound.
import { describe, expect, it } from 'vitest';
import { renderValue } from '../../../src/dsl/render.ts';

const render = (template: string, ctx: Record<string, unknown> = {}): unknown => renderValue(template, ctx, 'start.next[0].when');
const BIG = '{% set xs = range(100000) | list %}';
const OVER = /rendering took more than 1000000 steps/;

describe('comparisons pay for the items they compare', () => {
  it('still answers as before', () => {
    expect(render("{{ 'b' in ['a', 'b'] }}")).toBe(true);
    expect(render('{{ [1, [2, {"a": 3}]] == [1, [2, {"a": 3}]] }}')).toBe(true);
    expect(render('{{ {"a": [1]} != {"a": [2]} }}')).toBe(true);
    expect(render('{{ 2 is in([1, 2]) }}')).toBe(true);
    expect(render("{{ [1, 2, 3] | select('in', [2, 3]) | list }}")).toEqual([2, 3]);
    expect(render('{{ [1, 2, 2].count(2) }} {{ [1, 2].index(2) }}')).toBe('2 1');
    expect(render("{{ 'ell' in 'hello' }}")).toBe(true);
  });

  it('a thousand lookups in a list of a thousand still fit the budget', () => {
    expect(render('{% set xs = range(1000) | list %}{% set ns = namespace(n=0) %}{% for i in range(1000) %}{% if i in xs and xs.index(i) == i %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.n }}')).toBe('1000');
  });

  it.each([
    ['in', `${BIG}{% for i in range(2000) %}{% if -1 in xs %}{% endif %}{% endfor %}`],
    ['==', `${BIG}{% set ys = range(100000) | list %}{% for i in range(2000) %}{% if xs == ys %}{% endif %}{% endfor %}`],
    ['is in', `${BIG}{% for i in range(2000) %}{% if -1 is in(xs) %}{% endif %}{% endfor %}`],
    ['select in', `${BIG}{{ range(2000) | map('string') | select('in', xs) | list | length }}`],
    ['index', `${BIG}{% for i in range(2000) %}{{ xs.index(99999) }}{% endfor %}`],
    ['count', `${BIG}{% for i in range(2000) %}{{ xs.count(-1) }}{% endfor %}`],
  ])('%s over a long list, many times, is refused past the budget', (_name, template) => {
    expect(() => render(template)).toThrow(OVER);
  });
});

describe('unique', () => {
  it('keeps the first of equal items, as before', () => {
    expect(render('{{ [1, true, 1.0, "1", [1], [1], {"a": 1}, {"a": 1}, none, none, "A", "a", false, 0, -0] | unique }}')).toEqual([1, '1', [1], { a: 1 }, null, 'A', false]);
    expect(render('{{ ["A", "a", "b"] | unique(case_sensitive=true) }}')).toEqual(['A', 'a', 'b']);
    expect(render('{{ [{"n": "A"}, {"n": "a"}, {"n": "b"}] | unique(attribute="n") }}')).toEqual([{ n: 'A' }, { n: 'b' }]);
  });

  it('of 100,000 distinct numbers takes one pass, not 5 billion comparisons', () => {
    const started = Date.now();
    expect(render('{{ range(100000) | list | unique | length }}')).toBe(100000);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 60_000);
});
