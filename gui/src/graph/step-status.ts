import { EVENT } from '../../../machines/event-types.ts';
import type { ExecutionEvent } from '../api.ts';

export type StepStatus = 'pending' | 'active' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled';
export type StepStates = Record<string, StepStatus>;

/** A loop step's items: how many there are (null: not known, a loop that failed), how many ended, how many run now. */
export type LoopProgress = { length: number | null; done: number; in_flight: number };
export type LoopProgresses = Record<string, LoopProgress>;

/**
 * A step's entry in `states` or `loops`, undefined when it has none. Own keys only: a step may be
 * named like a property every object inherits (`constructor`), which a plain lookup finds.
 */
export function stepEntry<T>(byStep: Readonly<Record<string, T>>, step: string): T | undefined {
  return Object.hasOwn(byStep, step) ? byStep[step] : undefined;
}

/** `GET /api/executions/{id}/state` (the statecharts issue's contract). */
export type ExecutionState = { execution_id: number; status: string; active_steps: string[]; steps: Record<string, { status: StepStatus; loop?: LoopProgress; held?: number; held_children?: number }>; kept_signals?: KeptSignal[]; step_order?: string[] };

/** Of a paused execution, what the pause holds of each step: its commands and child starts (`held`), of them the child starts (`children`). */
export type HeldWork = Record<string, { held: number; children: number }>;

/** What the state answer says the pause holds, by step (steps holding nothing left out). */
export function heldFromState(state: ExecutionState): HeldWork {
  const out: HeldWork = {};
  for (const [name, s] of Object.entries(state.steps ?? {})) if (typeof s.held === 'number' && s.held > 0) out[name] = { held: s.held, children: typeof s.held_children === 'number' ? s.held_children : 0 };
  return out;
}

/** A signal sent before any step waited for it, kept for a step that says `buffer: true` (its sender; no payload). */
export type KeptSignal = { signal: string; by: string | null };

/** The signals kept, by name in the order first sent: `go (by alice, by bob), stop (by local)` (as svc status prints them). */
export function keptSignalsText(kept: readonly KeptSignal[]): string {
  const byName = new Map<string, string[]>();
  for (const k of kept) byName.set(k.signal, [...(byName.get(k.signal) ?? []), `by ${k.by ?? 'nobody'}`]);
  return [...byName].map(([name, senders]) => `${name} (${senders.join(', ')})`).join(', ');
}

/** Step statuses from the state answer. */
export function fromState(state: ExecutionState): StepStates {
  const out: StepStates = {};
  for (const [name, s] of Object.entries(state.steps ?? {})) out[name] = s.status;
  // A waiting step is one of the active ones: its own status says more.
  for (const name of state.active_steps ?? []) if (out[name] !== 'waiting') out[name] = 'active';
  return out;
}

/** The progress of each loop step the state answer reports (those running now). */
export function loopsFromState(state: ExecutionState): LoopProgresses {
  const out: LoopProgresses = {};
  for (const [name, s] of Object.entries(state.steps ?? {})) {
    const l = s.loop;
    if (l && typeof l.done === 'number' && typeof l.in_flight === 'number') out[name] = { length: typeof l.length === 'number' ? l.length : null, done: l.done, in_flight: l.in_flight };
  }
  return out;
}

/**
 * The progress of loops whose last run has ended, from the log (`/state` reports running loops
 * only): each item began with a `loop.item`, and `loop.done` counts those that ended. A loop that
 * failed stopped launching items, so how many it had is not known.
 */
export function endedLoopsFromEvents(events: readonly ExecutionEvent[]): LoopProgresses {
  const runs = new Map<string, { items: number; done?: number; failed?: boolean }>();
  for (const e of events) {
    if (!e.step) continue;
    if (e.event_type === EVENT.stepEnter) runs.set(e.step, { items: 0 });
    const run = runs.get(e.step);
    if (!run) continue;
    if (e.event_type === EVENT.loopItem) run.items++;
    else if (e.event_type === EVENT.loopDone && e.context && typeof e.context === 'object') {
      const c = e.context as { count?: unknown; failed?: unknown };
      run.done = typeof c.count === 'number' ? c.count : run.items;
      run.failed = c.failed === true;
    }
  }
  const out: LoopProgresses = {};
  for (const [step, r] of runs) if (r.done !== undefined) out[step] = { length: r.failed ? null : r.items, done: r.done, in_flight: 0 };
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

/**
 * Which steps each step was entered from, folded from the log: an entry comes from the step that
 * exited last before it (the machine takes a step's arcs as it exits it, in that transition; a
 * fork's entries share it; the first entry's is the start, `startNode`). A step that exited
 * before that one and entered nothing ended its branch: it is no source. The statechart draws
 * only these arcs as taken, not every arc between two steps that ran (a fallback arc beside the
 * path taken). With `endNode`, the steps that ended their branch (an exit that entered nothing:
 * another exit came next, or nothing did) are its sources: the arcs to the end they took.
 */
export function enteredFrom(events: ExecutionEvent[], startNode: string, endNode?: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const ended = new Set<string>();
  let last = startNode;
  // The step that exited last and has entered nothing yet.
  let open: string | null = null;
  for (const e of events) {
    if (!e.step) continue;
    if (e.event_type === EVENT.stepExit) {
      if (open !== null) ended.add(open);
      open = last = e.step;
    } else if (e.event_type === EVENT.stepEnter) {
      out.set(e.step, (out.get(e.step) ?? new Set<string>()).add(last));
      open = null;
    }
  }
  if (open !== null) ended.add(open);
  if (endNode !== undefined) out.set(endNode, ended);
  return out;
}

/**
 * Which steps each step was entered from in a simulation: `from` (simulatePlaybook's, beside its
 * `path`) names the step whose exit entered each step of the path (null: the start, `startNode`).
 * Feeds the statechart as `enteredFrom` does for a real execution. With `endNode`, a run of a
 * step that entered nothing before the step's next entry (or at all) ended its branch: its step
 * is a source of the end.
 */
export function enteredAlongPath(path: readonly string[], from: readonly (string | null)[], startNode: string, endNode?: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  path.forEach((step, i) => out.set(step, (out.get(step) ?? new Set<string>()).add(from[i] ?? startNode)));
  if (endNode !== undefined) {
    const ended = new Set<string>();
    path.forEach((step, i) => {
      const again = path.indexOf(step, i + 1);
      const until = again < 0 ? path.length : again;
      if (!from.slice(i + 1, until).includes(step)) ended.add(step);
    });
    out.set(endNode, ended);
  }
  return out;
}

/**
 * The steps a retry replayed (`step.replayed`: they took the outcome the execution retried
 * recorded, and their tasks ran there, not here). Without it the graph drew them `completed`
 * exactly as the steps that ran.
 */
export function replayedFromEvents(events: readonly ExecutionEvent[]): Set<string> {
  return new Set(events.flatMap((e) => (e.event_type === EVENT.stepReplayed && e.step ? [e.step] : [])));
}
