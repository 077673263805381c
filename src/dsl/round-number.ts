import { RenderFault } from './template-values.ts';

// Jinja's `round` filter: `common` is Python's round(value, precision), which rounds the exact
// binary value of the float, a half to even (round(2.5) is 2, round(0.125, 2) is 0.12 since
// 0.125 is exact, round(2.675, 2) is 2.67 since 2.675 is a little less); `ceil` and `floor` are
// math.ceil/math.floor(value * 10**precision) / 10**precision, whose integer step gives no -0.
// JavaScript's Math.round rounds a half up and works on the scaled float, so neither is used.

/** CPython's bounds (floatobject.c): past the most digits a double has the value is kept; below the fewest it is a zero of its sign. */
const MOST_DIGITS = 323;
const FEWEST_DIGITS = -308;

/** `n` rounded to `precision` decimal places by `method` as Jinja does. Throws RenderFault. */
export function roundNumber(n: number, precision: number, method: unknown): number {
  if (method !== 'common' && method !== 'ceil' && method !== 'floor') throw new RenderFault("round method must be 'common', 'ceil' or 'floor'");
  if (method === 'common') return pythonRound(n, precision);
  const factor = Number(`1e${precision}`);
  const scaled = n * factor;
  // Python raises here too (OverflowError, ValueError, ZeroDivisionError): no whole number to take.
  if (!Number.isFinite(scaled) || factor === 0) throw new RenderFault('round: the value times 10**precision is not a finite number');
  // Python's math.ceil/floor give an int (so never -0), then divided as ints are: exactly, rounded once.
  const whole = (method === 'ceil' ? Math.ceil(scaled) : Math.floor(scaled)) + 0;
  return precision >= 0 ? Number(`${BigInt(whole)}e-${precision}`) : whole / factor;
}

/** Python's round(n, digits) for a float: the nearest multiple of 10**-digits to n's exact value, a tie to the even one. */
function pythonRound(n: number, digits: number): number {
  if (!Number.isFinite(n) || n === 0 || digits > MOST_DIGITS) return n;
  if (digits < FEWEST_DIGITS) return n < 0 ? -0 : 0;
  // n = mantissa * 2**exponent exactly; so n * 10**digits = numerator / denominator in integers.
  const [mantissa, exponent] = binaryParts(Math.abs(n));
  let numerator = mantissa;
  let denominator = 1n;
  if (exponent >= 0) numerator <<= BigInt(exponent);
  else denominator <<= BigInt(-exponent);
  if (digits >= 0) numerator *= 10n ** BigInt(digits);
  else denominator *= 10n ** BigInt(-digits);
  let quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) quotient += 1n;
  // The decimal read back as the nearest double, as CPython does with the digits it rounded to.
  const rounded = Number(`${n < 0 ? '-' : ''}${quotient}e${-digits}`);
  if (!Number.isFinite(rounded)) throw new RenderFault('round: the rounded value is too large to represent');
  return rounded;
}

/** A finite positive double as its integer mantissa and power of two. */
function binaryParts(n: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // A subnormal (biased exponent 0) has no implicit leading 1 and the least exponent.
  return biased === 0 ? [fraction, -1074] : [fraction | (1n << 52n), biased - 1075];
}
