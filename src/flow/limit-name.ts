// The name of a flow limit (PUT /api/limits/{name}; a playbook's `concurrency.limit`, a task's
// `limit.name`): the same rule as migrations/0021_flow_control.sql's check. A playbook's inline
// `concurrency: {limit: N}` is kept under `@<path>`, a name no PUT can make.

/** Letters, digits, `_ . -`, starting with a letter or digit, at most 64 characters. */
export const LIMIT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What a limit name must be, for problems and 4xx details. */
export const LIMIT_NAME_RULE = 'must be a limit name: letters, digits, _ . - (starting with a letter or digit, at most 64 characters)';

/** The limit an inline `concurrency: {limit: N}` of the playbook at `path` is kept under. */
export function inlineLimitName(path: string): string {
  return `@${path}`;
}
