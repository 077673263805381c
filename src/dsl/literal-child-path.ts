/**
 * The child a `playbook` task starts, when its path is literal (no template: known before any
 * run, so it can be read from the catalog ahead); undefined for another kind of task or a
 * templated path.
 */
export function literalChildPath(task: { kind: string; path?: unknown }): string | undefined {
  return task.kind === 'playbook' && typeof task.path === 'string' && !task.path.includes('{') ? task.path : undefined;
}
