// A JSON number's decimal text, split to compare two texts by value: sign, significant digits
// (no leading or trailing zeros) and the power of ten of the last one.
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

function decimalKey(text: string): string | undefined {
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  const all = `${whole}${fraction}`.replace(/^0+/, '');
  const digits = all.replace(/0+$/, '');
  if (digits === '') return '0'; // -0 and 0 are one value to JSON
  return `${sign === '-' ? '-' : ''}${digits}e${Number(exponent) - fraction.length + (all.length - digits.length)}`;
}

/**
 * The JavaScript number of a decimal text where it reads back as the very value: a whole number
 * within ±(2^53 − 1), or another whose shortest print (`String(n)`) is the same decimal, trailing
 * zeros, leading zeros and the exponent's form aside (`10.50` is 10.5, `1E-7` is 1e-7); else the
 * text itself, a string, which a double would have changed (`9007199254740993`, `0.1000000000000000000001`,
 * `1e400`, `NaN`).
 */
export function exactNumber(text: string): number | string {
  const n = Number(text);
  if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) return text;
  const key = decimalKey(text);
  return key !== undefined && key === decimalKey(String(n)) ? n : text;
}

/**
 * JSON.parse, but each number as exactNumber reads its text (the reviver's `source`): JSON.parse
 * alone rounds an id past 2^53 and a fraction past a double's digits, and reads 1e400 as Infinity
 * (which JSON.stringify then writes as null), all without a word. Throws as JSON.parse does.
 */
export function parseJsonExact(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? exactNumber(context.source) : value,
  );
}
