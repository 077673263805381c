import { createActor, type ActionExecutor, type ActorScope, type EventFromLogic, type ExecutableActionObject, type SnapshotFrom } from 'xstate';
import { NO_INPUT, type ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionInput } from '../machines/execution/types.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;
type Actions = ExecutableActionObject[];
type Scoped = { scope: ActorScope<Snapshot, EventFromLogic<ExecutionMachine>>; sink: Actions };

// xstate's transition() and initialTransition() build a throwaway actor and actor system on every
// call: half the cost of a transition of the execution machine. It never spawns, invokes, emits or
// defers, so one inert scope per machine serves every call; its action executor only collects the
// actions (effects are returned, never run here).
const scopes = new WeakMap<ExecutionMachine, Scoped>();

function scopeOf(machine: ExecutionMachine): Scoped {
  let s = scopes.get(machine);
  if (!s) {
    const sink: Actions = [];
    const self = createActor(machine, { input: NO_INPUT }); // never started: only the scope's identity
    const actionExecutor: ActionExecutor = (action) => void sink.push(action);
    const scope = { self, id: '', sessionId: '', logger: () => {}, defer: () => {}, emit: () => {}, system: self.system, stopChild: () => {}, actionExecutor };
    s = { scope, sink };
    scopes.set(machine, s);
  }
  return s;
}

// The call is synchronous, so one sink per machine is never shared by two calls; it is emptied
// first in case an earlier call threw halfway.
function collect(machine: ExecutionMachine, run: (scope: Scoped['scope']) => Snapshot): [Snapshot, Actions] {
  const { scope, sink } = scopeOf(machine);
  sink.length = 0;
  const next = run(scope);
  return [next, sink.splice(0)];
}

/** What xstate's transition() returns (next snapshot, actions not run), without its per-call actor. */
export function pureTransition(machine: ExecutionMachine, snapshot: Snapshot, event: EventFromLogic<ExecutionMachine>): [Snapshot, Actions] {
  return collect(machine, (scope) => machine.transition(snapshot, event, scope));
}

/** What xstate's initialTransition() returns, without its per-call actor. */
export function pureInitialTransition(machine: ExecutionMachine, input: ExecutionInput): [Snapshot, Actions] {
  return collect(machine, (scope) => machine.getInitialSnapshot(scope, input));
}
