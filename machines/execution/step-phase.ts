import { isTerminalExecutionStatus, type ExecutionStatus } from '../statuses.ts';

/** Where one step is: the state of its region of the execution statechart. */
export type StepPhase = 'idle' | 'active' | 'completed' | 'failed';

/** The phase a step's last outcome leaves it in (`idle`: it never ran); a run's end reads the same. */
export function phaseOfOutcome(o: { status: 'ok' | 'error' | 'timeout' } | undefined): StepPhase {
  return o ? (o.status === 'ok' ? 'completed' : 'failed') : 'idle';
}

/**
 * The outcome of a step's last run in `steps` (the machine's `context.steps`), undefined if it
 * never ran. Own keys only: a step may be named like a property every object inherits
 * (`constructor`, `toString`), which a plain lookup finds on a step that never ran.
 */
export function lastOutcome<T>(steps: Readonly<Record<string, T>>, step: string): T | undefined {
  return Object.hasOwn(steps, step) ? steps[step] : undefined;
}

/**
 * The phase of a step in a snapshot: its state in the state value when the value names it (every
 * step of a chart of regions; the running step of a sequence), else the phase its last outcome
 * left it in (a sequence's other steps; every step once the execution has ended).
 */
export function stepPhase(snap: { value: unknown; context: { steps: Readonly<Record<string, { status: 'ok' | 'error' | 'timeout' }>> } }, step: string): StepPhase {
  const value = snap.value;
  const running = value && typeof value === 'object' ? (value as { running?: Record<string, unknown> }).running : undefined;
  const state = running && Object.hasOwn(running, step) ? running[step] : undefined;
  const phase = typeof state === 'string' ? state : state && typeof state === 'object' ? Object.keys(state)[0] : undefined;
  if (phase === 'active' || phase === 'completed' || phase === 'failed' || phase === 'idle') return phase;
  return phaseOfOutcome(lastOutcome(snap.context.steps, step));
}

/** The top-level state of an execution snapshot's value: running, completed, failed or cancelled. */
export function topStateOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.keys(value)[0] ?? '';
  return '';
}

/**
 * The status of an execution snapshot: a terminal top-level state as it is, else `paused` when the
 * machine's paused flag is set (execution.paused; before its admission too: the admitter passes it
 * over until execution.resumed), else `queued` before its admission (execution.admitted), else
 * `running`. The one reading of it.
 */
export function executionStatusOf(snap: { value: unknown; context: { paused: boolean; queued?: boolean } }): ExecutionStatus {
  const top = topStateOf(snap.value);
  return isTerminalExecutionStatus(top) ? top : snap.context.paused ? 'paused' : snap.context.queued ? 'queued' : 'running';
}
