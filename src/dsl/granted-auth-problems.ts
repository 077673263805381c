import { isObject } from '../objects.ts';
import type { Problem } from './reference-problems.ts';
import { memberReads, undefinedNames } from './static-reference-problems.ts';
import { TEMPLATE_MARK } from './template-ast.ts';

/**
 * A worker reads a task's credential only when the server grants it, and the server names it by
 * rendering the task's `auth` (an mcp task's `server`, whose registered `auth` it falls back to)
 * over what the command was issued with (src/credential/names-credential.ts): no keychain, and no
 * outcome of a task of the same command, which runs after the grant. A template reading either
 * named no credential there, and the task failed `credential_not_granted` at every run.
 */
export function grantedAuthProblems(document: unknown): Problem[] {
  if (!isObject(document) || !Array.isArray(document.workflow)) return [];
  const problems: Problem[] = [];
  document.workflow.forEach((step, i) => {
    if (!isObject(step)) return;
    const path = `workflow[${i}].tool`;
    const tasks = Array.isArray(step.tool) ? step.tool.map((t, n) => [t, `${path}[${n}]`] as const) : [[step.tool, path] as const];
    // The tasks of the command a task runs in (machines/execution/segments.ts): a `playbook` task
    // and a task with a `limit` each stand apart.
    let command: string[] = [];
    tasks.forEach(([task, taskPath], n) => {
      if (!isObject(task)) return;
      const before = n > 0 ? tasks[n - 1][0] : undefined;
      if (task.kind === 'playbook' || task.limit !== undefined || !isObject(before) || before.kind === 'playbook' || before.limit !== undefined) command = [];
      const fields = task.kind === 'mcp' ? ['auth', 'server'] : task.kind === 'playbook' ? [] : ['auth'];
      for (const field of fields) {
        const source = task[field];
        if (typeof source !== 'string' || !TEMPLATE_MARK.test(source)) continue;
        const reads = [
          ...memberReads(source, ['tasks']).flatMap((read) => (command.includes(read.key) ? [{ text: read.text, why: `task '${read.key}' runs in the same command, after that` }] : [])),
          ...(undefinedNames(source, []).includes('keychain') ? [{ text: 'keychain', why: "the keychain is the worker's alone" }] : []),
        ];
        for (const { text, why } of reads) {
          problems.push({ path: `${taskPath}.${field}`, message: `'${text}' cannot name the credential: the server grants it before the command runs, and ${why} (read a step's result, steps.<name>, or the workload)` });
        }
      }
      command.push(typeof task.name === 'string' ? task.name : `task_${n}`);
    });
  });
  return problems;
}
