// Jinja's `round` filter is Python's round() for method='common': the exact binary value of the
// float, a half to even (round(2.5) is 2, round(0.125, 2) is 0.12). Ours rounded halves away from
// zero on the scaled float (2.5 to 3, 0.125 to 0.13); `ceil` and `floor` are Python's math
// functions on value * 10**precision, which never give -0. Expected values are CPython 3's.
import { describe, expect, it } from 'vitest';
import { renderValue, TemplateError } from '../../../src/dsl/render.ts';

const round = (value: number, args = ''): unknown => renderValue(`{{ x | round${args} }}`, { x: value }, 'f');

describe('round, as Jinja (Python) rounds', () => {
  it.each([
    [2.5, '', 2],
    [3.5, '', 4],
    [-2.5, '', -2],
    [0.5, '', 0],
    [1.5, '', 2],
    [0.125, '(2)', 0.12],
    [0.375, '(2)', 0.38],
    // 2.675 is 2.67499999999999982236431605997495353221893310546875 as a double.
    [2.675, '(2)', 2.67],
    [1.005, '(2)', 1],
    [25, '(-1)', 20],
    [35, '(-1)', 40],
    [123456789.125, '(2)', 123456789.12],
    [3.14159, '(2)', 3.14],
    [3.7, '', 4],
    [1e300, '(-301)', 0],
    [5e-324, '(323)', 0],
    [5e-324, '(324)', 5e-324],
  ])('%s | round%s is %s', (value, args, expected) => {
    expect(round(value, args)).toBe(expected);
  });

  it('keeps the sign of a zero it rounds to, as Python does (round(-0.5) is -0.0)', () => {
    expect(Object.is(round(-0.5), -0)).toBe(true);
    expect(Object.is(round(-0.004, '(2)'), -0)).toBe(true);
  });

  it.each([
    [3.1, '(method="ceil")', 4],
    [-3.1, '(method="floor")', -4],
    [0.121, '(2, "ceil")', 0.13],
    [0.129, '(2, "floor")', 0.12],
    [1234, '(-2, "ceil")', 1300],
    [2.5, '(0, "floor")', 2],
  ])('%s | round%s is %s', (value, args, expected) => {
    expect(round(value, args)).toBe(expected);
  });

  it('gives 0, not -0, where ceil reaches zero (math.ceil gives an int)', () => {
    expect(Object.is(round(-0.5, '(method="ceil")'), 0)).toBe(true);
    expect(Object.is(round(-0.001, '(2, "ceil")'), 0)).toBe(true);
  });

  it('refuses what Python refuses: another method, a result too large for a float', () => {
    expect(() => round(1.5, '(method="up")')).toThrow(TemplateError);
    expect(() => round(1.7976931348623157e308, '(-308)')).toThrow(/too large/);
    expect(() => round(1e300, '(10, "ceil")')).toThrow(TemplateError);
  });
});
