import { EVENT } from '../../../machines/event-types.ts';
import type { ExecutionEvent } from '../api.ts';

export type StepStatus = 'pending' | 'active' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled';
export type StepStates = Record<string, StepStatus>;

/** `GET /api/executions/{id}/state` (the statecharts issue's contract). */
export type ExecutionState = { execution_id: number; status: string; active_steps: string[]; steps: Record<string, { status: StepStatus }> };

/** Step statuses from the state answer. */
export function fromState(state: ExecutionState): StepStates {
  const out: StepStates = {};
  for (const [name, s] of Object.entries(state.steps ?? {})) out[name] = s.status;
  // A waiting step is one of the active ones: its own status says more.
  for (const name of state.active_steps ?? []) if (out[name] !== 'waiting') out[name] = 'active';
  return out;
}

/**
 * Step statuses folded from the event log, for a server without `/state`: a step is active
 * between its step.enter and step.exit, then completed or failed by the exit's status; steps
 * still active when the execution is cancelled are cancelled.
 */
export function fromEvents(events: ExecutionEvent[]): StepStates {
  const out: StepStates = {};
  const open = new Map<string, number>();
  for (const e of events) {
    if (e.event_type === EVENT.executionCancelled) {
      for (const step of open.keys()) out[step] = 'cancelled';
      open.clear();
      continue;
    }
    if (!e.step) continue;
    if (e.event_type === EVENT.stepEnter) {
      open.set(e.step, (open.get(e.step) ?? 0) + 1);
      out[e.step] = 'active';
    } else if (e.event_type === EVENT.stepExit) {
      const left = (open.get(e.step) ?? 1) - 1;
      if (left > 0) open.set(e.step, left);
      else open.delete(e.step);
      const status = e.context && typeof e.context === 'object' && 'status' in e.context ? (e.context as { status: unknown }).status : 'ok';
      out[e.step] = left > 0 ? 'active' : status === 'error' ? 'failed' : 'completed';
    }
  }
  return out;
}
