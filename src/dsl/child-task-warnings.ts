import type { NormalizedPlaybook } from './parse-playbook.ts';

// A worker's task field the server's `playbook` task does not honour, with what holds instead.
// The server starts the child and waits for its end (machines/execution/step-work.ts): no worker
// resolves a credential for it. DESIGN.md lists `auth` as a field of every task kind, so a
// playbook that writes it is stored, with a warning saying it has no effect. (`retry` and
// `timeout_seconds` do hold: the server retries and bounds the child itself.)
const WORKER_ONLY = {
  auth: "a playbook task's child uses the credentials its own tasks name",
} as const;

/** Registration warnings for `playbook` tasks that carry a worker-only field (`auth`), one per field, naming its path. */
export function childTaskWarnings(pb: NormalizedPlaybook): string[] {
  const warnings: string[] = [];
  pb.workflow.forEach((step, i) => {
    step.tasks.forEach((task, j) => {
      if (task.kind !== 'playbook') return;
      const at = step.tasks.length > 1 ? `workflow[${i}].tool[${j}]` : `workflow[${i}].tool`;
      const written = { auth: task.auth !== undefined };
      for (const [field, instead] of Object.entries(WORKER_ONLY)) {
        if (written[field as keyof typeof WORKER_ONLY]) warnings.push(`${at}.${field} has no effect on a playbook task (the server starts the child, no worker runs it): ${instead}`);
      }
    });
  });
  return warnings;
}
