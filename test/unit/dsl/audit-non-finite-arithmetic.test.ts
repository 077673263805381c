// Arithmetic past a double's range gave Infinity or NaN, which no JSON holds: a value such as
// `set: {big: "{{ 2 ** 10000 }}"}` was stored as null without a word ("Infinity" in text). A result
// that is not a finite number is now a template error naming it, as `1 / 0` is.
import { describe, expect, it } from 'vitest';
import { renderValue } from '../../../src/dsl/render.ts';

const render = (template: string): unknown => renderValue(template, { workload: { big: 1e308, xs: [1e308, 1e308], neg: -8 } }, 'start.next[0].set.big');

describe('arithmetic that leaves the numbers JSON holds', () => {
  it.each([
    ['{{ 2 ** 10000 }}'],
    ['text {{ 2 ** 10000 }}'],
    ['{{ workload.big * 10 }}'],
    ['{{ workload.big + workload.big }}'],
    ['{{ -workload.big - workload.big }}'],
    ['{{ workload.big / 0.5 }}'],
    ['{{ workload.neg ** 0.5 }}'],
    ['{{ workload.xs | sum }}'],
    ['{{ [2 ** 10000] }}'],
  ])('%s is a template error', (template) => {
    expect(() => render(template)).toThrow(/start\.next\[0\]\.set\.big: .*not a finite number/);
  });

  it('keeps every finite result', () => {
    expect(render('{{ workload.big * 1 }}')).toBe(1e308);
    expect(render('{{ 2 ** 1000 }}')).toBe(2 ** 1000);
    expect(render('{{ 7 // 2 }} {{ -7 % 3 }} {{ 2 ** -1 }}')).toBe('3 2 0.5');
    expect(render('{{ [1, 2.5] | sum }}')).toBe(3.5);
  });
});
