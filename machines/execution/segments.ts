import type { NormalizedStep, NormalizedTask } from '../../src/dsl/parse-playbook.ts';

export type Segment = { kind: 'worker' | 'child'; tasks: NormalizedTask[] };

const cache = new WeakMap<NormalizedStep, Segment[]>();

/**
 * Splits a step's task list into what one command runs: consecutive worker tasks form one
 * segment; each `playbook` task is its own segment, run by the server as a child execution; so
 * is a worker task with a `limit` (its command waits for room on the limit's key alone).
 */
export function segmentsOf(step: NormalizedStep): Segment[] {
  let out = cache.get(step);
  if (out) return out;
  out = [];
  for (const task of step.tasks) {
    const last = out.at(-1);
    if (task.kind === 'playbook') out.push({ kind: 'child', tasks: [task] });
    else if (last?.kind === 'worker' && !task.limit && !last.tasks[0].limit) last.tasks.push(task);
    else out.push({ kind: 'worker', tasks: [task] });
  }
  cache.set(step, out);
  return out;
}
