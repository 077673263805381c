import { findUnstorable, pathSegment } from '../find-unstorable.ts';

/**
 * Nesting a fire's rendered payload may have. PostgreSQL's jsonb parser recurses and fails past
 * some thousands of levels (its stack), so a deeper payload could never be started: a NATS message
 * would be delivered again forever. Far above any real payload (API bodies stop at 64).
 */
export const MAX_PAYLOAD_DEPTH = 1000;

/**
 * Why a rendered payload cannot be stored (its place and the reason, `payload.a.b contains NUL …`),
 * or undefined. A fire's data comes from outside (a webhook body, a NATS message): what PostgreSQL
 * refuses must make the fire `refused`, recorded, rather than fail the transaction of its start.
 */
export function payloadProblem(payload: Record<string, unknown>): string | undefined {
  const unstorable = findUnstorable(payload);
  if (unstorable) return placedProblem('payload', unstorable.path, unstorable.message);
  const deep = deeperThan(payload, MAX_PAYLOAD_DEPTH);
  return deep === undefined ? undefined : placedProblem('payload', deep, `is nested deeper than ${MAX_PAYLOAD_DEPTH} levels, which cannot be stored`);
}

/** A problem at `path` (`a.b`, `[0]`, '' for the whole) under the template root `root`, as a fire's refusal says it: `payload.a.b contains NUL`. */
export function placedProblem(root: string, path: string, message: string): string {
  return `${root}${path === '' || path.startsWith('[') ? '' : '.'}${path} ${message}`;
}

/** The path of the first value nested deeper than `limit` levels, or undefined. Walks with its own stack. */
function deeperThan(value: unknown, limit: number): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: v, path, depth } = item;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return path;
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (const [key, child] of entries) stack.push({ value: child, path: path + pathSegment(key, path === ''), depth: depth + 1 });
  }
  return undefined;
}
