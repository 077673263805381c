// Filter arguments Jinja refuses were taken silently: `dictsort(by="Value")` (a misspelling) sorted
// by key, `sum(start="x")` and `sum(start=none)` dropped the start, `truncate(2)` gave "..." (longer
// than asked) and a negative leeway was used. Each is now a template error naming the argument.
import { describe, expect, it } from 'vitest';
import { renderValue } from '../../../src/dsl/render.ts';

const render = (template: string): unknown => renderValue(template, { workload: { m: { b: 1, a: 2 }, s: 'abcdefghijkl' } }, 'start.t.command');

describe('filter arguments Jinja refuses', () => {
  it.each([
    ['{{ workload.m | dictsort(by="Value") }}', /dictsort: by must be 'key' or 'value'/],
    ['{{ workload.m | dictsort(false, 1) }}', /dictsort: by must be 'key' or 'value'/],
    ['{{ [1, 2] | sum(start="x") }}', /sum: start must be a number/],
    ['{{ [1, 2] | sum(start=none) }}', /sum: start must be a number/],
    ['{{ workload.s | truncate(2) }}', /truncate: length must be at least the length of end \(3\)/],
    ['{{ workload.s | truncate(-1) }}', /truncate: length must be at least the length of end/],
    ['{{ workload.s | truncate(5, leeway=-3) }}', /truncate: leeway must be >= 0/],
  ])('%s', (template, message) => {
    expect(() => render(template)).toThrow(message);
  });

  it('takes what Jinja takes, as before', () => {
    expect(render('{{ workload.m | dictsort(by="value") }}')).toEqual([['b', 1], ['a', 2]]);
    expect(render('{{ workload.m | dictsort }}')).toEqual([['a', 2], ['b', 1]]);
    expect(render('{{ workload.m | dictsort(by="key", reverse=true) }}')).toEqual([['b', 1], ['a', 2]]);
    expect(render('{{ [1, 2] | sum(start=10) }} {{ [1, 2] | sum(start=true) }} {{ [1, 2] | sum }}')).toBe('13 4 3');
    expect(render('{{ workload.s | truncate(3) }}|{{ workload.s | truncate(5, end="") }}|{{ workload.s | truncate(6, leeway=0) }}')).toBe('...|abcde|abc...');
  });
});
