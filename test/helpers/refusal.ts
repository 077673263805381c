// What a refusal's body may and must say: no stack frame or source path, and a `detail` whose
// text a test searches for the field at fault.

/** A stack frame ("at fn (file:1:2)"), a source path or a node internal: none may reach a client. */
export const STACK_TRACE = /\n\s+at |\bat [^\s]+ \(|\.ts:\d+|\.js:\d+|node:internal|\/src\/|\/node_modules\//;

/** Every string of a `detail` (message, errors, code), for "does it name the field" checks. */
export function detailText(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map(detailText).join('\n');
  if (detail && typeof detail === 'object') return Object.values(detail).map(detailText).join('\n');
  return String(detail ?? '');
}
