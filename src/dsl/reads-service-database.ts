import { isObject } from '../objects.ts';

/**
 * True for a task that may read the service database as its reader role: a postgres task whose
 * `read_only` is not false and that has no `auth` (or one a template decides when rendered).
 */
export function readsServiceDatabase(task: unknown): boolean {
  if (!isObject(task) || task.kind !== 'postgres' || task.read_only === false) return false;
  const auth = task.auth;
  return auth === undefined || auth === null || auth === '' || (typeof auth === 'string' && auth.includes('{{'));
}
