import { EVENT } from '../../../machines/event-types.ts';
import { retryDefaultStep, retryReaches } from '../../../machines/retry-default-step.ts';
import { entryStep } from '../../../src/dsl/parse-playbook.ts';
import { isObject } from '../../../src/objects.ts';
import type { Execution, ExecutionEvent } from '../api.ts';
import type { StepStates } from '../graph/step-status.ts';

/** The step whose failure ended the execution, when it is one of `steps`. */
function errorStepOf(execution: Pick<Execution, 'error'>, steps: readonly string[]): string | undefined {
  const ended = isObject(execution.error) && typeof execution.error.step === 'string' ? execution.error.step : undefined;
  return ended !== undefined && steps.includes(ended) ? ended : undefined;
}

/**
 * The step a retry that began no step (cancelled while queued) was to start from, its
 * `execution.started`'s `from_step`: the server retries it from there by default, with the
 * outcomes it was to replay (src/engine/unbegun-retry.ts). Undefined for any other execution.
 */
export function unbegunRetryFrom(events: readonly ExecutionEvent[], steps: readonly string[]): string | undefined {
  if (events.some((e) => e.event_type === EVENT.stepEnter)) return undefined;
  const started = events.find((e) => e.event_type === EVENT.executionStarted);
  const context = isObject(started?.context) ? started.context : {};
  const from = context.from_step;
  return typeof context.retry_of === 'number' && typeof from === 'string' && steps.includes(from) ? from : undefined;
}

/**
 * The step Retry starts from unless the user picks another: the server's own default
 * (machines/retry-default-step.ts; `unbegunFrom`, unbegunRetryFrom) over what the page shows, `steps` in playbook order.
 */
export function retryDefault(execution: Pick<Execution, 'status' | 'error'>, steps: readonly string[], states: StepStates, unbegunFrom?: string): string | undefined {
  return unbegunFrom ?? retryDefaultStep({ status: execution.status, errorStep: errorStepOf(execution, steps), steps, cutShort: (s) => states[s] === 'cancelled' });
}

/**
 * The steps Retry may start from, in playbook order: those the server's retry takes
 * (retryReaches). A step the execution never reached (a branch not taken, a step after the
 * failure) was offered too, and the server refused it with a 422. A step ran to an outcome when
 * its view is `completed` or `failed` (machines/execution-view.ts: an ended step's phase is its last outcome's).
 */
export function retryChoices(execution: Pick<Execution, 'error'>, steps: readonly string[], states: StepStates, unbegunFrom?: string): string[] {
  const errorStep = errorStepOf(execution, steps);
  const entry = entryStep(steps);
  return steps.filter((s) => s === unbegunFrom || retryReaches(s, { entry, errorStep, exited: (x) => states[x] === 'completed' || states[x] === 'failed', cutShort: (x) => states[x] === 'cancelled' }));
}
