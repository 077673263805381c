import { retryDefaultStep, retryReaches } from '../../../machines/retry-default-step.ts';
import { entryStep } from '../../../src/dsl/parse-playbook.ts';
import { isObject } from '../../../src/objects.ts';
import type { Execution } from '../api.ts';
import type { StepStates } from '../graph/step-status.ts';

/** The step whose failure ended the execution, when it is one of `steps`. */
function errorStepOf(execution: Pick<Execution, 'error'>, steps: readonly string[]): string | undefined {
  const ended = isObject(execution.error) && typeof execution.error.step === 'string' ? execution.error.step : undefined;
  return ended !== undefined && steps.includes(ended) ? ended : undefined;
}

/**
 * The step Retry starts from unless the user picks another: the server's own default
 * (machines/retry-default-step.ts) over what the page shows, `steps` in playbook order.
 */
export function retryDefault(execution: Pick<Execution, 'status' | 'error'>, steps: readonly string[], states: StepStates): string | undefined {
  return retryDefaultStep({ status: execution.status, errorStep: errorStepOf(execution, steps), steps, cutShort: (s) => states[s] === 'cancelled' });
}

/**
 * The steps Retry may start from, in playbook order: those the server's retry takes
 * (retryReaches). A step the execution never reached (a branch not taken, a step after the
 * failure) was offered too, and the server refused it with a 422. A step ran to an outcome when
 * its view is `completed` or `failed` (machines/execution-view.ts: an ended step's phase is its last outcome's).
 */
export function retryChoices(execution: Pick<Execution, 'error'>, steps: readonly string[], states: StepStates): string[] {
  const errorStep = errorStepOf(execution, steps);
  const entry = entryStep(steps);
  return steps.filter((s) => retryReaches(s, { entry, errorStep, exited: (x) => states[x] === 'completed' || states[x] === 'failed', cutShort: (x) => states[x] === 'cancelled' }));
}
