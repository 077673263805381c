import type { Admission } from '../../machines/execution/types.ts';

/**
 * `a` without its debounce window, for a start that is another execution's own: a successor's (a
 * retry, auto-resume's restart) or a child's (a `playbook` task's). Joining a window would hand
 * its execution to another start's payload (its replay, its link to the one it succeeds, or its
 * parent's wait for its result lost), and a window it opened could be joined by a stranger's
 * start. It still waits on its concurrency key. Undefined when nothing else is left to wait for.
 */
export function undebounced(a: Admission | undefined): Admission | undefined {
  if (!a?.debounce) return a;
  return a.limit === null ? undefined : { ...a, debounce: null };
}
