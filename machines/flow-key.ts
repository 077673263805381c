import { CODE } from './error-codes.ts';

// Flow control's values as the machine and the start path make them (pure): a rendered key, and
// the priority a start without one gets. DESIGN.md "Flow control"; src/flow/ holds the rest.

/** The priority of a playbook (and of its commands) that names none: the middle of 0..9. */
export const DEFAULT_PRIORITY = 5;

/** The longest key a limit's key template may render to (core.flow_key.key; an index column). */
export const MAX_FLOW_KEY_LENGTH = 500;

/** A rendered key that cannot be one (too long): the task or the start fails with `limit_key`. */
export class FlowKeyError extends Error {
  readonly code = CODE.limit_key;
  readonly field: string;
  constructor(field: string) {
    super(`${field} rendered to a key over ${MAX_FLOW_KEY_LENGTH} characters`);
    this.name = 'FlowKeyError';
    this.field = field;
  }
}

/** The key a rendered `key:` template gives: text as it is, nothing as '', any other value as JSON. */
export function flowKey(value: unknown, field: string): string {
  const key = typeof value === 'string' ? value : value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  // Characters are code points (as PostgreSQL's char_length counts), not UTF-16 units: a key of
  // 300 emoji is 300 characters, under the bound, though its `length` is 600.
  if (key.length > MAX_FLOW_KEY_LENGTH && [...key].length > MAX_FLOW_KEY_LENGTH) throw new FlowKeyError(field);
  return key;
}
