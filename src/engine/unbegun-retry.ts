import type { ExecutionContext, StepOutcome } from '../../machines/execution/types.ts';
import { isObject } from '../objects.ts';

/** Where a retry that began no step was to start, and the outcomes it was to replay there. */
export type UnbegunRetry = { from: string; replay: Record<string, StepOutcome[]> };

/**
 * A retry that ended before it began any step (cancelled while queued on its playbook's
 * `concurrency` key, say) took none of the outcomes it was started with: its log holds no run of
 * them. Retried in turn it starts where it was to start (its `from_step`), with those outcomes,
 * instead of from its entry step with none (which ran again every step the execution it retried
 * had completed). Undefined for any other execution: one that began a step has its runs in its log.
 */
export function unbegunRetry(started: { context: unknown } | undefined, ctx: ExecutionContext, steps: readonly string[]): UnbegunRetry | undefined {
  // No run ever began: each run takes the next number (machines/execution/actions.ts startRun).
  if (ctx.nextRun !== 1 || !ctx.input.replay) return undefined;
  const context = isObject(started?.context) ? started.context : {};
  const from = context.from_step;
  if (typeof context.retry_of !== 'number' || typeof from !== 'string' || !steps.includes(from)) return undefined;
  // A log written before replays were lists holds one outcome a step: its first run's.
  const replay = Object.fromEntries(Object.entries(ctx.input.replay).map(([step, recorded]) => [step, Array.isArray(recorded) ? recorded : [recorded]]));
  return { from, replay };
}
