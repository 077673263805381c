import { createActor, type Actor, type EventFromLogic, type InspectionEvent, type SnapshotFrom } from 'xstate';
import type { ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionInput } from '../machines/execution/types.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;
/** An action the machine executed, as xstate reports it: the `effect` actions carry the effects. */
export type MachineAction = { type: string; params?: unknown };
type Actions = MachineAction[];

// The machine's effects come back as actions, never run (the `effect` action does nothing): a
// transition is a pure function of the machine, the snapshot and the event. It is computed by an
// actor of xstate's public createActor, restored from the snapshot, whose executed actions are
// read through its inspection events. xstate's transition() does the same with a throwaway actor
// per call, whose construction computes state values of every step region three times: on a
// 40-step playbook that was 28 % of a transition (bench/transition-cost.ts). Here the actor that
// made a snapshot stays with it (`live`): the next transition from that snapshot is one `send`,
// and any other (the same snapshot again, after a write found it stale) restores a new actor.

type Live = { actor: Actor<ExecutionMachine>; actions: Actions };

/** The actor standing at each snapshot it made, while the snapshot is referenced (a weak key). */
const live = new WeakMap<Snapshot, Live>();

function newActor(machine: ExecutionMachine, from: { snapshot: Snapshot } | { input: ExecutionInput }): Live {
  const l: Live = { actor: undefined as unknown as Actor<ExecutionMachine>, actions: [] };
  const inspect = (ev: InspectionEvent) => {
    if (ev.type === '@xstate.action') l.actions.push(ev.action);
  };
  l.actor = 'snapshot' in from ? createActor(machine, { snapshot: from.snapshot, input: from.snapshot.context.input, inspect }) : createActor(machine, { input: from.input, inspect });
  // An action that throws leaves an error snapshot, thrown by the caller below; without an error
  // observer xstate would also rethrow it later, out of band.
  l.actor.subscribe({ error: () => {} });
  return l;
}

/** The actor's snapshot after its last step, with the actions of that step; it stays live for the next one. */
function settle(l: Live): [Snapshot, Actions] {
  const next = l.actor.getSnapshot();
  if (next.status === 'error') throw next.error;
  const actions = l.actions;
  l.actions = [];
  if (next.status === 'active') live.set(next, l);
  return [next, actions];
}

/** The next snapshot of an execution and the actions of the transition (effects not run). */
export function pureTransition(machine: ExecutionMachine, snapshot: Snapshot, event: EventFromLogic<ExecutionMachine>): [Snapshot, Actions] {
  let l = live.get(snapshot);
  if (l && l.actor.logic === machine) live.delete(snapshot);
  else {
    l = newActor(machine, { snapshot });
    l.actor.start();
  }
  l.actor.send(event);
  return settle(l);
}

/** The first snapshot of an execution started with `input`, and its actions (effects not run). */
export function pureInitialTransition(machine: ExecutionMachine, input: ExecutionInput): [Snapshot, Actions] {
  const l = newActor(machine, { input });
  l.actor.start();
  return settle(l);
}

/**
 * The snapshot `events` fold `from` to, effects not performed: one actor for the whole run, and
 * one that reports no actions (nothing reads them), so hydrating a long log costs its transitions
 * only. The snapshot it ends at has no live actor: a transition from it restores one.
 */
export function pureReplay(machine: ExecutionMachine, from: Snapshot, events: readonly EventFromLogic<ExecutionMachine>[]): Snapshot {
  if (from.status !== 'active' || events.length === 0) return from;
  const actor = createActor(machine, { snapshot: from, input: from.context.input });
  actor.subscribe({ error: () => {} });
  actor.start();
  let snapshot: Snapshot = from;
  for (const ev of events) {
    actor.send(ev);
    snapshot = actor.getSnapshot();
    if (snapshot.status === 'error') throw snapshot.error;
    if (snapshot.status !== 'active') break;
  }
  return snapshot;
}
