import { createActor, type Actor, type EventFromLogic, type InspectionEvent, type Snapshot as ActorSnapshot, type SnapshotFrom, type StateValue, type Subscription } from 'xstate';
import type { ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionContext, ExecutionInput } from '../machines/execution/types.ts';

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

/**
 * `heard`: the actor's inspection, which collects the actions, while it is on. A replay turns it
 * off (its actions are dropped): xstate builds no inspection event for an actor nobody inspects,
 * and those were about 4 % of a fold (the hydration bench's log, fastest of 81 folds).
 */
type Live = { actor: Actor<ExecutionMachine>; actions: Actions; heard: Subscription | null };

/** The actor standing at each snapshot it made, while the snapshot is referenced (a weak key). */
const live = new WeakMap<Snapshot, Live>();

/** An actor of the machine started with `input`, or restored from `snapshot` (a machine snapshot or its persisted form). */
function newActor(machine: ExecutionMachine, from: { snapshot?: ActorSnapshot<unknown>; input: ExecutionInput }): Live {
  const l: Live = { actor: createActor(machine, from), actions: [], heard: null };
  hear(l, true);
  // An action that throws leaves an error snapshot, thrown by the caller below; without an error
  // observer xstate would also rethrow it later, out of band.
  l.actor.subscribe({ error: () => {} });
  return l;
}

/** Turns the actor's inspection (the actions it collects) on or off. */
function hear(l: Live, on: boolean): void {
  if (on && !l.heard) {
    l.heard = l.actor.system.inspect((ev: InspectionEvent) => {
      if (ev.type === '@xstate.action') l.actions.push(ev.action);
    });
  } else if (!on && l.heard) {
    l.heard.unsubscribe();
    l.heard = null;
  }
}

/** The actor standing at `snapshot` (taken: it moves on), or a new one restored from it. */
function actorAt(machine: ExecutionMachine, snapshot: Snapshot): Live {
  const l = live.get(snapshot);
  if (l && l.actor.logic === machine) {
    live.delete(snapshot);
    return l;
  }
  const restored = newActor(machine, { snapshot, input: snapshot.context.input });
  restored.actor.start();
  return restored;
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
  const l = actorAt(machine, snapshot);
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
 * The snapshot of a state stored as its value and context (core.execution.snapshot), restored by
 * an actor that stays live at it: restored once, whether a replay or a transition follows.
 */
export function pureRestore(machine: ExecutionMachine, stored: { value: StateValue; context: ExecutionContext }): Snapshot {
  // The form xstate persists a snapshot in (getPersistedSnapshot): an execution has no child
  // actors and no history states.
  const persisted = { status: 'active' as const, output: undefined, error: undefined, value: stored.value, context: stored.context, children: {}, historyValue: {} };
  const l = newActor(machine, { snapshot: persisted, input: stored.context.input });
  l.actor.start();
  return settle(l)[0];
}

/**
 * The snapshot `events` fold `from` to, effects not performed (they happened when the events were
 * first folded): one actor for the whole run, which then stays live at the snapshot it ends at,
 * so the next transition from it is one `send` (a hydrated execution is restored once, not twice).
 */
export function pureReplay(machine: ExecutionMachine, from: Snapshot, events: readonly EventFromLogic<ExecutionMachine>[]): Snapshot {
  if (from.status !== 'active') return from;
  const l = actorAt(machine, from);
  hear(l, false);
  for (const ev of events) {
    l.actor.send(ev);
    const snapshot = l.actor.getSnapshot();
    if (snapshot.status === 'error') throw snapshot.error;
    if (snapshot.status !== 'active') break;
  }
  hear(l, true);
  l.actions = [];
  return settle(l)[0];
}
