import { isObject } from '../objects.ts';
import type { Problem } from './reference-problems.ts';
import { parseTemplate } from './template-parser.ts';

/**
 * Rules of flow control that the shape cannot say: a task's `limit` gates a worker's command, so
 * a `playbook` task (a child execution the server starts) takes none: the child playbook's own
 * `concurrency` limits it; and a task may not wait on the very slot its execution holds (the
 * playbook's `concurrency` limit with the same key): at concurrency 1 it would wait forever.
 */
export function flowProblems(document: unknown): Problem[] {
  if (!isObject(document) || !Array.isArray(document.workflow)) return [];
  const problems: Problem[] = [];
  const c = document.concurrency;
  const own = isObject(c) && typeof c.limit === 'string' ? { limit: c.limit, key: typeof c.key === 'string' ? c.key : '' } : null;
  document.workflow.forEach((step, i) => {
    if (!isObject(step)) return;
    const tools = Array.isArray(step.tool) ? step.tool : step.tool === undefined ? [] : [step.tool];
    tools.forEach((task, j) => {
      if (!isObject(task) || !isObject(task.limit)) return;
      const where = Array.isArray(step.tool) ? `workflow[${i}].tool[${j}].limit` : `workflow[${i}].tool.limit`;
      if (task.kind === 'playbook') problems.push({ path: where, message: "applies to a worker's task; a playbook task's child is limited by its own playbook's concurrency" });
      else if (own && task.limit.name === own.limit && sameTemplate(typeof task.limit.key === 'string' ? task.limit.key : '', own.key)) {
        problems.push({ path: where, message: `names the playbook's own concurrency limit ${String(own.limit)} with the same key: the task would wait for a slot its execution holds` });
      }
    });
  });
  return problems;
}

/** Whether two templates read the same: `{{workload.t}}` is `{{ workload['t'] }}` (spacing and spelling of a key aside). */
function sameTemplate(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(parseTemplate(a)) === JSON.stringify(parseTemplate(b));
  } catch {
    // One does not parse: that is its own problem (template-problems.ts).
    return false;
  }
}
