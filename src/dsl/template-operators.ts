import type { BinaryOp, Expr } from './template-ast.ts';
import { compare, equal, limitText, MAX_RANGE_ITEMS, MAX_RENDERED_CHARS, numeric, RenderFault, toText, typeName, type RenderBudget } from './template-values.ts';

// The operators of templates over plain values, as Jinja (Python) has them: comparison,
// arithmetic, repetition and slicing. template-interpreter.ts evaluates the operands.

/** `left <op> right` for a comparison operator. */
export function compared(op: Extract<Expr, { type: 'compare' }>['rest'][number]['op'], left: unknown, right: unknown, budget: RenderBudget): boolean {
  switch (op) {
    case '==':
      return equal(left, right, budget);
    case '!=':
      return !equal(left, right, budget);
    case '<':
      return compare(left, right) < 0;
    case '>':
      return compare(left, right) > 0;
    case '<=':
      return compare(left, right) <= 0;
    case '>=':
      return compare(left, right) >= 0;
  }
}

/** Arithmetic as in Jinja (Python): no implicit conversion between text and numbers. */
export function binary(op: BinaryOp, a: unknown, b: unknown, budget: RenderBudget): unknown {
  if (op === '~') return limitText(toText(a) + toText(b));
  if (op === '+') {
    if (typeof a === 'string' && typeof b === 'string') return limitText(a + b);
    if (Array.isArray(a) && Array.isArray(b)) {
      budget.spend(a.length + b.length);
      return [...a, ...b];
    }
  }
  if (op === '*') {
    const sequenceFirst = typeof a === 'string' || Array.isArray(a);
    const sequence = sequenceFirst ? a : b;
    if (typeof sequence === 'string' || Array.isArray(sequence)) return repeat(sequence, sequenceFirst ? b : a, budget);
  }
  const x = numeric(a);
  const y = numeric(b);
  if (x === undefined || y === undefined) throw new RenderFault(`unsupported operand types for ${op}: ${typeName(a)} and ${typeName(b)}`);
  return finite(op, arithmetic(op, x, y));
}

function arithmetic(op: Exclude<BinaryOp, '~'>, x: number, y: number): number {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '**':
      return x ** y;
  }
  if (y === 0) throw new RenderFault('division by zero');
  if (op === '/') return x / y;
  if (op === '//') return Math.floor(x / y);
  return x - y * Math.floor(x / y);
}

/**
 * A result past a double's range (Infinity) or none at all ((-8) ** 0.5 is NaN) is no value JSON
 * holds: stored, it became null without a word. Refused as `1 / 0` is (Python overflows too).
 */
export function finite(what: string, n: number): number {
  if (!Number.isFinite(n)) throw new RenderFault(`${what}: the result is not a finite number`);
  return n;
}

function repeat(sequence: string | readonly unknown[], times: unknown, budget: RenderBudget): string | unknown[] {
  const n = numeric(times);
  if (n === undefined || !Number.isInteger(n)) throw new RenderFault(`a ${typeName(sequence)} can only be repeated an integer number of times`);
  const count = Math.max(0, n);
  if (typeof sequence === 'string') {
    if (sequence.length * count > MAX_RENDERED_CHARS) throw new RenderFault(`a rendered string would exceed ${MAX_RENDERED_CHARS} characters`);
    budget.spend((sequence.length * count) >> 6);
    return sequence.repeat(count);
  }
  if (sequence.length * count > MAX_RANGE_ITEMS) throw new RenderFault(`a repeated list would exceed ${MAX_RANGE_ITEMS} items`);
  budget.spend(sequence.length * count);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) out.push(...sequence);
  return out;
}

/** A slice bound: an integer (a boolean as 0/1, as Python), or undefined for none (the default). */
export function sliceIndex(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = numeric(value);
  if (n === undefined || !Number.isInteger(n)) throw new RenderFault(`slice indices must be integers or none, not ${typeof value === 'number' ? 'a fraction' : typeName(value)}`);
  return n;
}

/**
 * `sequence[start:stop:step]` as Python: negative bounds count from the end, bounds past either
 * end are clamped, a negative step walks backwards, and step 0 is an error. Strings are sliced
 * by UTF-16 unit, as they are indexed (`s[0]`) and measured (`| length`).
 */
export function sliceOf(sequence: string | readonly unknown[], start: number | undefined, stop: number | undefined, stepOrNone: number | undefined, budget: RenderBudget): string | unknown[] {
  const step = stepOrNone ?? 1;
  if (step === 0) throw new RenderFault('slice step cannot be zero');
  const n = sequence.length;
  const back = step < 0;
  const clamp = (i: number | undefined, fallback: number): number => {
    if (i === undefined) return fallback;
    if (i < 0) return Math.max(i + n, back ? -1 : 0);
    return Math.min(i, back ? n - 1 : n);
  };
  const from = clamp(start, back ? n - 1 : 0);
  const to = clamp(stop, back ? -1 : n);
  const count = back ? (from > to ? Math.ceil((from - to) / -step) : 0) : from < to ? Math.ceil((to - from) / step) : 0;
  budget.spend(typeof sequence === 'string' ? count >> 6 : count);
  if (step === 1) return sequence.slice(from, from + count);
  const picked: unknown[] = [];
  for (let k = 0, i = from; k < count; k++, i += step) picked.push(sequence[i]);
  return typeof sequence === 'string' ? picked.join('') : picked;
}
