import { LIVE_EXECUTION_STATUSES, TERMINAL_EXECUTION_STATUSES } from '../../machines/statuses.ts';

/** A parenthesised SQL list of constant words (statuses, kinds, event types) for fixed statement text: `('a', 'b')`. Only for constants of the code, never for input. */
export function sqlList(words: readonly string[]): string {
  for (const w of words) if (!/^[a-z_.]+$/.test(w)) throw new Error(`not a constant word: ${w}`);
  return `(${words.map((w) => `'${w}'`).join(', ')})`;
}

/** The live execution statuses as an SQL list, for `status IN ${LIVE_EXECUTION_SQL}` (execution_live_idx's predicate). */
export const LIVE_EXECUTION_SQL = sqlList(LIVE_EXECUTION_STATUSES);
/** The terminal execution statuses as an SQL list. */
export const TERMINAL_EXECUTION_SQL = sqlList(TERMINAL_EXECUTION_STATUSES);
