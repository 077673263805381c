import type { NormalizedPlaybook } from './parse-playbook.ts';

// A worker's task fields the server's `playbook` task does not honour, with what holds instead.
// The server starts the child and waits for its end (machines/execution/step-work.ts): no worker
// resolves a credential for it, retries it or times it out. DESIGN.md lists them as fields of every
// task kind, so a playbook that writes them is stored, with a warning saying they have no effect.
const WORKER_ONLY = {
  auth: "a playbook task's child uses the credentials its own tasks name",
  retry: "a playbook task's child is retried by its own tasks' retry",
  timeout_seconds: "a playbook task's child is bounded by its own tasks' timeout_seconds",
} as const;

/** Registration warnings for `playbook` tasks that carry a worker-only field (`auth`, `retry`, `timeout_seconds`), one per field, naming its path. */
export function childTaskWarnings(pb: NormalizedPlaybook): string[] {
  const warnings: string[] = [];
  pb.workflow.forEach((step, i) => {
    step.tasks.forEach((task, j) => {
      if (task.kind !== 'playbook') return;
      const at = step.tasks.length > 1 ? `workflow[${i}].tool[${j}]` : `workflow[${i}].tool`;
      // Every task has a retry once normalized: one attempt, which is what a playbook task gets.
      const written = { auth: task.auth !== undefined, retry: task.retry.attempts !== 1, timeout_seconds: task.timeout_seconds !== undefined };
      for (const [field, instead] of Object.entries(WORKER_ONLY)) {
        if (written[field as keyof typeof WORKER_ONLY]) warnings.push(`${at}.${field} has no effect on a playbook task (the server starts the child, no worker runs it): ${instead}`);
      }
    });
  });
  return warnings;
}
