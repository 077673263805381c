// Filters added to the shared nunjucks environment on top of its builtins (length, default, ...).
// Error messages never include the value: it may be a secret.

/** JSON text of a value (`undefined` reads as `null`); `indent` pretty-prints. */
function tojson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent) ?? 'null';
}

/** Parses JSON text into a native value. */
function fromjson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw new Error('fromjson: the value is not valid JSON');
  }
}

/** Jinja's int: booleans → 0/1, numbers truncated, numeric text parsed, anything else → `fallback`. */
function int(value: unknown, fallback = 0): number {
  const number = toNumber(value);
  return number === undefined ? fallback : Math.trunc(number);
}

/** Jinja's float: like int without truncation. */
function float(value: unknown, fallback = 0): number {
  return toNumber(value) ?? fallback;
}

/** Text of a value: '' for null/undefined, JSON for lists and objects. */
function string(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object' && !(value instanceof String)) return JSON.stringify(value) ?? '';
  return String(value);
}

function b64encode(value: unknown): string {
  return Buffer.from(string(value), 'utf8').toString('base64');
}

function b64decode(value: unknown): string {
  return Buffer.from(string(value), 'base64').toString('utf8');
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' && !(value instanceof String)) return undefined;
  const text = value.trim();
  const number = text === '' ? Number.NaN : Number(text);
  return Number.isFinite(number) ? number : undefined;
}

/** The filters by name, for `Environment.addFilter`. */
export const templateFilters: Record<string, (value: unknown, ...args: never[]) => unknown> = {
  tojson,
  fromjson,
  int,
  float,
  string,
  b64encode,
  b64decode,
};
