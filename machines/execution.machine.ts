import { enqueueActions, setup, type EventObject, type ParameterizedObject } from 'xstate';
import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import * as work from './execution/actions.ts';
import { executionGuards, type ArcParams, type RunEndedParams, type StepParams } from './execution/guards.ts';
import { compileStatechart } from './playbook-statechart.ts';
import type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput } from './execution/types.ts';

export type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput } from './execution/types.ts';
export { topStateOf } from './execution/step-phase.ts';

/** Bump when the context shape, the statechart or the meaning of its actions and guards changes: old snapshots are then replayed from the log. */
export const EXECUTION_MACHINE_VERSION = 8;

/**
 * The execution of one playbook as the statechart compiled from it (machines/playbook-statechart.ts):
 * its steps under `running` (a region each, or a sequence when one runs at a time), then
 * completed | failed | cancelled. The statechart's
 * transitions and guards decide which step runs next and when the execution ends; the named
 * actions (machines/execution/actions.ts) do a step's work and record what events say. Every
 * side effect is returned by transition() as an `effect` action for actors/ to perform.
 */
export function createExecutionMachine(playbook: NormalizedPlaybook) {
  const pb = playbook;
  const g = executionGuards(pb);
  const machineSetup = setup({
    types: {
      context: {} as ExecutionContext,
      events: {} as ExecutionEvent,
      input: {} as ExecutionInput,
    },
    actions: {
      // Performed by actors/, never here: transition() only returns it.
      effect: (_args, _effect: Effect) => {},
      recordOutcome: act<undefined>((ctx, ev) => work.recordOutcome(pb, ctx, ev)),
      cancel: act<undefined>((ctx, ev) => work.cancel(pb, ctx, ev)),
      bufferSignal: act<undefined>((ctx, ev) => work.bufferSignal(pb, ctx, ev)),
      pause: act<undefined>((ctx) => work.pause(pb, ctx)),
      resume: act<undefined>((ctx) => work.resume(pb, ctx)),
      admit: act<undefined>((ctx, ev) => work.admit(pb, ctx, ev)),
      startRun: act<StepParams>((ctx, _ev, p) => work.startRun(pb, ctx, p.step)),
      launchItems: act<StepParams>((ctx, _ev, p) => work.launchItems(pb, ctx, p.step)),
      endLoop: act<StepParams>((ctx, _ev, p) => work.endLoop(pb, ctx, p.step)),
      exitRun: act<StepParams>((ctx, _ev, p) => work.exitRun(pb, ctx, p.step)),
      takeArc: act<ArcParams>((ctx, _ev, p) => work.takeArc(pb, ctx, p.from, p.index)),
      dropRoute: act<StepParams>((ctx, _ev, p) => work.dropRoute(pb, ctx, p.step)),
      failArc: act<StepParams>((ctx, _ev, p) => work.failArc(pb, ctx, p.step)),
      failUnhandled: act<StepParams>((ctx, _ev, p) => work.failUnhandled(pb, ctx, p.step)),
      settleFailed: act<undefined>((ctx) => work.settleFailed(pb, ctx)),
      settleCompleted: act<undefined>((ctx) => work.settleCompleted(pb, ctx)),
    },
    guards: {
      pendingCommand: ({ context, event }) => g.pendingCommand(context, event),
      bufferable: ({ context, event }) => g.bufferable(context, event),
      unpaused: ({ context }) => g.unpaused(context),
      paused: ({ context }) => g.paused(context),
      queued: ({ context }) => g.queued(context),
      entry: ({ context }) => g.entry(context),
      arc: ({ context }, p: ArcParams) => g.arc(context, p),
      runEnded: ({ context }, p: RunEndedParams) => g.runEnded(context, p),
      loopHasRoom: ({ context }, p: StepParams) => g.loopHasRoom(context, p),
      loopDone: ({ context }, p: StepParams) => g.loopDone(context, p),
      arcError: ({ context }, p: StepParams) => g.arcError(context, p),
      unhandledFailure: ({ context }, p: StepParams) => g.unhandledFailure(context, p),
      routed: ({ context }, p: StepParams) => g.routed(context, p),
      failing: ({ context }) => g.failing(context),
      allDone: ({ context }) => g.allDone(context),
    },
  });
  return machineSetup.createMachine({
    ...(compileStatechart(pb) as object),
    // xstate's transition() builds a throwaway actor per call, whose initial snapshot it computes
    // without input: refused here at once (an error snapshot nobody reads), because entering every
    // step's region costs more than the transition itself on a long playbook.
    context: ({ input }) => {
      if (input === undefined) throw NO_EXECUTION_WITHOUT_INPUT;
      return work.initialContext(input);
    },
  } as Parameters<typeof machineSetup.createMachine>[0]);
}

// One instance, thrown on every transition() call: a new Error would capture a stack each time.
const NO_EXECUTION_WITHOUT_INPUT = new Error('an execution machine starts only with its input');

type EffectAction = { type: 'effect'; params: Effect };

/** A named action whose work is pure: its context is assigned and its effects enqueued as `effect` actions, never run here. */
function act<P extends ParameterizedObject['params'] | undefined>(reduce: (ctx: ExecutionContext, event: ExecutionEvent, params: P) => work.Reduction) {
  return enqueueActions<ExecutionContext, ExecutionEvent, P, ExecutionEvent, never, EffectAction, never, never, EventObject>(({ context, event, enqueue }, params) => {
    const r = reduce(context, event, params);
    if (r.context !== context) enqueue.assign(() => r.context);
    for (const e of r.effects) enqueue({ type: 'effect', params: e });
  });
}

export type ExecutionMachine = ReturnType<typeof createExecutionMachine>;
