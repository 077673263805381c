import { isObject } from '../../../src/objects.ts';
import type { Execution } from '../api.ts';
import type { StepStates } from '../graph/step-status.ts';

/**
 * The step Retry starts from unless the user picks another, as the server takes it when none is
 * sent (src/engine/retry-execution.ts): the step whose failure ended the execution (its error's
 * step, not an earlier step that failed and whose error an arc took on), for a cancelled one the
 * first step, in playbook order, the cancel cut short, else its entry step. None for a completed
 * one: the server wants a step named.
 */
export function retryDefault(execution: Pick<Execution, 'status' | 'error'>, steps: readonly string[], states: StepStates): string | undefined {
  const ended = isObject(execution.error) && typeof execution.error.step === 'string' ? execution.error.step : undefined;
  if (ended && steps.includes(ended)) return ended;
  if (execution.status !== 'cancelled') return undefined;
  // The entry as the playbook parser takes it: the step named start, else the first.
  return steps.find((s) => states[s] === 'cancelled') ?? (steps.includes('start') ? 'start' : steps[0]);
}
