import { isTerminalExecutionStatus, type ExecutionStatus } from '../statuses.ts';

/** Where one step is: the state of its region of the execution statechart. */
export type StepPhase = 'idle' | 'active' | 'completed' | 'failed';

/** The phase of a step in a snapshot's state value (`idle` once the execution has ended: no regions are left). */
export function stepPhase(value: unknown, step: string): StepPhase {
  if (!value || typeof value !== 'object') return 'idle';
  const running = (value as { running?: Record<string, unknown> }).running;
  const region = running?.[step];
  const phase = typeof region === 'string' ? region : region && typeof region === 'object' ? Object.keys(region)[0] : undefined;
  return phase === 'active' || phase === 'completed' || phase === 'failed' ? phase : 'idle';
}

/** The top-level state of an execution snapshot's value: running, completed, failed or cancelled. */
export function topStateOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.keys(value)[0] ?? '';
  return '';
}

/**
 * The status of an execution snapshot: a terminal top-level state as it is, else `queued` before
 * its admission (execution.admitted), else `paused` when the machine's paused flag is set
 * (execution.paused), else `running`. The one reading of it.
 */
export function executionStatusOf(snap: { value: unknown; context: { paused: boolean; queued?: boolean } }): ExecutionStatus {
  const top = topStateOf(snap.value);
  return isTerminalExecutionStatus(top) ? top : snap.context.queued ? 'queued' : snap.context.paused ? 'paused' : 'running';
}
