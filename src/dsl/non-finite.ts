import { pathSegment } from '../find-unstorable.ts';
import { isObject } from '../objects.ts';

/** YAML's `.inf` and `.nan` are numbers JSON has none for: stored with the playbook, they become null. */
const NON_FINITE_PROBLEM = 'is not a finite number (.inf, .nan), which JSON cannot hold: it would be stored as null';

/** A whole number past ±(2^53 − 1): its digits are not the ones written (12345678901234567890 reads as 12345678901234567000). */
const UNSAFE_INTEGER_PROBLEM = 'is a whole number past ±(2^53 − 1), which a JSON number does not keep exactly (its last digits would change): quote it to keep it as text';

/**
 * The first number in a parsed YAML value that its stored JSON would not keep as written, with
 * its path ('' for the value itself) and why, or undefined: `.inf` / `.nan` (a playbook is stored
 * and run as JSON, so it silently became null) and whole numbers past ±(2^53 − 1) (rounded
 * silently, an id's digits changed). Walks with its own stack: no depth overflows it.
 */
export function findUnkeptNumber(value: unknown): { path: string; message: string } | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: v, path } = item;
    if (typeof v === 'number' && !Number.isFinite(v)) return { path, message: NON_FINITE_PROBLEM };
    if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) return { path, message: UNSAFE_INTEGER_PROBLEM };
    if (Array.isArray(v)) v.forEach((child, i) => stack.push({ value: child, path: path + pathSegment(i, path === '') }));
    else if (isObject(v)) for (const [key, child] of Object.entries(v)) stack.push({ value: child, path: path + pathSegment(key, path === '') });
  }
  return undefined;
}
