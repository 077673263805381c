import type { CallArgs } from './template-filters.ts';
import { mappingOf, MAX_RANGE_ITEMS, numeric, RenderFault, type RenderBudget } from './template-values.ts';
import { isPlainObject } from '../objects.ts';

// The functions a template may call by name besides its own macros: Jinja's `range` and `dict`.
// (`namespace()` is handled by `{% set %}`; Jinja's lipsum, cycler and joiner are not offered.)

function integer(value: unknown, what: string): number {
  const n = numeric(value);
  if (n === undefined || !Number.isInteger(n)) throw new RenderFault(`range: ${what} must be an integer`);
  return n;
}

/** Jinja's range(stop) / range(start, stop[, step]), at most MAX_RANGE_ITEMS long. */
function range(args: CallArgs, budget: RenderBudget): number[] {
  if (args.keywords?.size) throw new RenderFault('range takes no named arguments');
  const p = args.positional;
  if (p.length < 1 || p.length > 3) throw new RenderFault('range takes 1 to 3 arguments');
  const start = p.length === 1 ? 0 : integer(p[0], 'start');
  const stop = integer(p.length === 1 ? p[0] : p[1], 'stop');
  const step = p.length === 3 ? integer(p[2], 'step') : 1;
  if (step === 0) throw new RenderFault('range: step must not be zero');
  const size = Math.max(0, Math.ceil((stop - start) / step));
  if (size > MAX_RANGE_ITEMS) throw new RenderFault(`range: more than ${MAX_RANGE_ITEMS} items`);
  budget.spend(size);
  return Array.from({ length: size }, (_, i) => start + i * step);
}

/** Jinja's dict(mapping?, key=value, ...): a new mapping. */
function dict(args: CallArgs): Record<string, unknown> {
  if (args.positional.length > 1) throw new RenderFault('dict takes at most one mapping');
  const base = args.positional[0];
  if (base !== undefined && !isPlainObject(base)) throw new RenderFault('dict: the argument must be a mapping');
  return mappingOf([...Object.entries(base ?? {}), ...(args.keywords ?? [])]);
}

const globals = new Map<string, (args: CallArgs, budget: RenderBudget) => unknown>([
  ['range', range],
  ['dict', dict],
]);

/** Calls the global function `name`; undefined when there is no such function. */
export function callGlobal(name: string, args: CallArgs, budget: RenderBudget): { value: unknown } | undefined {
  const fn = globals.get(name);
  return fn ? { value: fn(args, budget) } : undefined;
}
