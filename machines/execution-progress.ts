import { isLiveExecutionStatus, type ExecutionStatus } from './statuses.ts';

/**
 * `progress` of an execution, 0..100: done steps over the playbook's known steps, whatever the
 * execution's outcome. A step is done once it has ended (a handled error too), except the step
 * whose error failed the execution. 100 only when completed or when every step is done.
 */
export function executionProgress(status: ExecutionStatus, endedSteps: readonly string[], knownSteps: number, failedStep?: string): number {
  if (status === 'completed') return 100;
  const known = Math.max(1, knownSteps);
  const failing = status === 'failed' && failedStep !== undefined && endedSteps.includes(failedStep) ? 1 : 0;
  const done = Math.min(Math.max(0, endedSteps.length - failing), known);
  const share = Math.round((100 * done) / known);
  // Rounding must not report a finished share while a step is left (199 of 200 is 99, not 100),
  // and a running execution has work left even when every step has ended (its wrap-up).
  return done < known || isLiveExecutionStatus(status) ? Math.min(99, share) : 100;
}
