import { CODE } from './error-codes.ts';

// Flow control's values as the machine and the start path make them (pure): a rendered key, and
// the priority a start without one gets. DESIGN.md "Flow control"; src/flow/ holds the rest.

/** The priority of a playbook (and of its commands) that names none: the middle of 0..9. */
export const DEFAULT_PRIORITY = 5;

/** The longest key a limit's key template may render to (core.flow_key.key; an index column). */
export const MAX_FLOW_KEY_LENGTH = 500;

/** A rendered key that cannot be one (too long, or text PostgreSQL cannot hold): the task or the start fails with `limit_key`. */
export class FlowKeyError extends Error {
  readonly code = CODE.limit_key;
  readonly field: string;
  constructor(field: string, why = `over ${MAX_FLOW_KEY_LENGTH} characters`) {
    super(`${field} rendered to a key ${why}`);
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
  // A template can make text no payload carries (`b64decode`, `fromjson`): a key is a text column,
  // which refuses NUL (the start's or the report's write failed, a 500) and mangles lone surrogates.
  if (key.includes('\0')) throw new FlowKeyError(field, 'that contains NUL (\\u0000), which cannot be stored');
  if (!key.isWellFormed()) throw new FlowKeyError(field, 'that contains a lone surrogate (\\ud800-\\udfff), which cannot be stored');
  return key;
}
