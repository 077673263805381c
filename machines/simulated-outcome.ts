import { closest } from '../src/dsl/unknown-field-message.ts';
import { ALL_CODES, CODE, codeInfo, type TaskOutcomeCode } from './error-codes.ts';

// The outcomes a simulation's caller chooses per command (simulatePlaybook's outcomes, `svc
// simulate --outcome`): checked as text, since its callers are plain JavaScript and a command line.

/**
 * How a simulated command (or wait) ends: `error` fails it with the simulation's own code
 * (`simulated`: a decision on the code is not the simulation's), `error:CODE` with a task outcome
 * code, decided as a run decides on it; `timeout` times a signal wait or a child out.
 */
export type SimulatedOutcome = 'ok' | 'error' | 'timeout' | `error:${Exclude<TaskOutcomeCode, 'simulated'>}`;

const ERROR_PREFIX = 'error:';
/** The codes `error:CODE` may give: a task's or step's outcome's, but the simulation's own. */
const FAILURE_CODES: readonly string[] = ALL_CODES.filter((c) => c !== CODE.simulated && codeInfo(c).where.includes('task_outcome'));

/** Why `o` is no simulated outcome (ok, error, error:CODE, timeout), or undefined when it is one. */
export function outcomeProblem(o: unknown): string | undefined {
  if (o === 'ok' || o === 'error' || o === 'timeout') return undefined;
  if (typeof o === 'string' && o.startsWith(ERROR_PREFIX)) {
    const code = o.slice(ERROR_PREFIX.length);
    if (FAILURE_CODES.includes(code)) return undefined;
    const close = closest(code, FAILURE_CODES);
    return `no task fails with code ${JSON.stringify(code)} (${close ? `did you mean '${close}'?` : "docs/playbook-dsl.md, Error codes, lists a task's"})`;
  }
  return `expected 'ok', 'error', 'error:CODE' or 'timeout' (or a list of them), got ${JSON.stringify(o) ?? String(o)}`;
}

/** The code a failing outcome gives its task (`simulated` for a bare `error`); null for ok and timeout. */
export function failureCodeOf(o: SimulatedOutcome): string | null {
  if (o === 'error') return CODE.simulated;
  return o.startsWith(ERROR_PREFIX) ? o.slice(ERROR_PREFIX.length) : null;
}
