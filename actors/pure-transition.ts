import { initialTransition, transition, type EventFromLogic, type ExecutableActionObject, type SnapshotFrom } from 'xstate';
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
