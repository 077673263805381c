import { retryDefaultStep } from '../../../machines/retry-default-step.ts';
import { isObject } from '../../../src/objects.ts';
import type { Execution } from '../api.ts';
import type { StepStates } from '../graph/step-status.ts';

/**
 * The step Retry starts from unless the user picks another: the server's own default
 * (machines/retry-default-step.ts) over what the page shows, `steps` in playbook order.
 */
export function retryDefault(execution: Pick<Execution, 'status' | 'error'>, steps: readonly string[], states: StepStates): string | undefined {
  const ended = isObject(execution.error) && typeof execution.error.step === 'string' ? execution.error.step : undefined;
  return retryDefaultStep({ status: execution.status, errorStep: ended !== undefined && steps.includes(ended) ? ended : undefined, steps, cutShort: (s) => states[s] === 'cancelled' });
}
