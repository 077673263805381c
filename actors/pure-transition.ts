import { createActor, initialTransition, transition, type EventFromLogic, type ExecutableActionObject, type SnapshotFrom } from 'xstate';
import type { ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionInput } from '../machines/execution/types.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;
type Actions = ExecutableActionObject[];

// xstate's public transition() and initialTransition(): the machine's effects come back as
// actions, never run. Each call builds a throwaway actor whose initial snapshot xstate computes
// without input; the execution machine refuses that at once (machines/execution.machine.ts),
// before its step regions are entered, which would cost more than the transition itself
// (bench/transition-cost.ts).

/** The next snapshot of an execution and the actions of the transition (effects not run). */
export function pureTransition(machine: ExecutionMachine, snapshot: Snapshot, event: EventFromLogic<ExecutionMachine>): [Snapshot, Actions] {
  return transition(machine, snapshot, event);
}

/** The first snapshot of an execution started with `input`, and its actions (effects not run). */
export function pureInitialTransition(machine: ExecutionMachine, input: ExecutionInput): [Snapshot, Actions] {
  return initialTransition(machine, input);
}

/**
 * The snapshot `events` fold `from` to, effects not performed: one actor for the whole run
 * (xstate's public createActor, restored from `from`) instead of a throwaway actor per event, so
 * hydrating a long log costs its transitions only. The machine's effects are named actions
 * without an implementation: an actor runs them as nothing.
 */
export function pureReplay(machine: ExecutionMachine, from: Snapshot, events: readonly EventFromLogic<ExecutionMachine>[]): Snapshot {
  if (!events.length) return from;
  // The input is the one the snapshot was started with (restoring does not read it).
  const actor = createActor(machine, { snapshot: from, input: from.context.input });
  actor.start();
  for (const ev of events) actor.send(ev);
  const snapshot = actor.getSnapshot();
  actor.stop();
  if (snapshot.status === 'error') throw snapshot.error;
  return snapshot;
}