import { isObject } from '../objects.ts';
import type { Problem } from './reference-problems.ts';
import { childPath } from './render.ts';

// YAML 1.1's merge key (`<<: *defaults`) is no part of YAML 1.2, which js-yaml reads: `<<` is an
// ordinary key there, so the fields it was meant to bring are missing and a document's schema
// names those (`kind: is required`), not the `<<` that caused it.
const MESSAGE =
  "'<<' (YAML 1.1's merge key) is not read: documents are YAML 1.2, where it is an ordinary key; write the fields out (an alias such as *defaults may stand for a whole value)";

/** Every mapping key `<<` whose value is a mapping or a list of them (a merge meant), at its path; checked before the schema. */
export function mergeKeyProblems(document: unknown): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown, path: string): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    // An alias is the same object again: walked once.
    seen.add(value);
    if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${path}[${i}]`));
    for (const [key, item] of Object.entries(value)) {
      const at = childPath(path, key);
      if (key === '<<' && (isObject(item) || (Array.isArray(item) && item.length > 0 && item.every(isObject)))) problems.push({ path: at, message: MESSAGE });
      else walk(item, at);
    }
  };
  walk(document, '');
  return problems;
}
