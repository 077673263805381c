import { isObject } from '../objects.ts';
import type { Problem } from './reference-problems.ts';

// A worker's task fields the server's `playbook` task cannot honour, with what to use instead.
// The server starts the child and waits for its end (machines/execution/step-work.ts): no worker
// resolves a credential for it, retries it or times it out, so these were ignored while the
// playbook read as if they held.
const WORKER_ONLY: Record<string, string> = {
  auth: "applies to a worker's task; a playbook task's child uses the credentials its own tasks name",
  retry: "applies to a worker's task; a playbook task's child is retried by its own tasks' retry",
  timeout_seconds: "applies to a worker's task; a playbook task's child is bounded by its own tasks' timeout_seconds",
};

/** Problems of `playbook` tasks that carry a worker-only field (`auth`, `retry`, `timeout_seconds`), one per field, at its path. */
export function childTaskProblems(document: unknown): Problem[] {
  if (!isObject(document) || !Array.isArray(document.workflow)) return [];
  const problems: Problem[] = [];
  document.workflow.forEach((step, i) => {
    if (!isObject(step)) return;
    const tools = Array.isArray(step.tool) ? step.tool : step.tool === undefined ? [] : [step.tool];
    tools.forEach((task, j) => {
      if (!isObject(task) || task.kind !== 'playbook') return;
      const at = Array.isArray(step.tool) ? `workflow[${i}].tool[${j}]` : `workflow[${i}].tool`;
      for (const [field, message] of Object.entries(WORKER_ONLY)) if (Object.hasOwn(task, field)) problems.push({ path: `${at}.${field}`, message });
    });
  });
  return problems;
}
