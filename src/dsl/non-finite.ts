import { pathSegment } from '../find-unstorable.ts';
import { isObject } from '../objects.ts';

/** YAML's `.inf` and `.nan` are numbers JSON has none for: stored with the playbook, they become null. */
export const NON_FINITE_PROBLEM = 'is not a finite number (.inf, .nan), which JSON cannot hold: it would be stored as null';

/**
 * The path of the first number in a parsed YAML value that JSON cannot hold ('' for the value
 * itself), or undefined. A playbook is stored and run as JSON, so such a value silently became
 * null (`{{ workload.n }}` rendered as empty text). Walks with its own stack: no depth overflows it.
 */
export function findNonFinite(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: v, path } = item;
    if (typeof v === 'number' && !Number.isFinite(v)) return path;
    if (Array.isArray(v)) v.forEach((child, i) => stack.push({ value: child, path: path + pathSegment(i, path === '') }));
    else if (isObject(v)) for (const [key, child] of Object.entries(v)) stack.push({ value: child, path: path + pathSegment(key, path === '') });
  }
  return undefined;
}
