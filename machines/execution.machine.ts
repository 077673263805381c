import { setup } from 'xstate';
import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { initialContext, reduceEvent, reduceStart, type Reduction } from './execution/reduce.ts';
import { stepPhase } from './execution/step-phase.ts';
import { compileStatechart } from './playbook-statechart.ts';
import type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput } from './execution/types.ts';

export type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput } from './execution/types.ts';
export { topStateOf } from './execution/step-phase.ts';

/** The input of an inert actor (xstate computes an initial snapshot it throws away): starts nothing. */
export const NO_INPUT: ExecutionInput = Object.freeze({
  executionId: 0,
  catalogId: 0,
  path: '',
  parentExecutionId: null,
  parentSeq: null,
  rootExecutionId: 0,
  workload: {},
  args: {},
});

/** Bump when the context shape, the statechart or the reducer's meaning changes: old snapshots are then replayed from the log. */
export const EXECUTION_MACHINE_VERSION = 3;

/**
 * The execution of one playbook as the statechart compiled from it (machines/playbook-statechart.ts):
 * one region per step under `running`, then completed | failed | cancelled. Events are folded by
 * the `fold` action, the step transition function (machines/execution/reduce.ts), whose context
 * the step regions follow; every side effect is returned by transition() as an `effect` action
 * for actors/ to perform.
 */
export function createExecutionMachine(playbook: NormalizedPlaybook) {
  const machineSetup = setup({
    types: {
      context: {} as ExecutionContext,
      events: {} as ExecutionEvent,
      input: {} as ExecutionInput,
    },
    actions: {
      // Performed by actors/, never here: transition() only returns it.
      effect: (_args, _effect: Effect) => {},
      // Named in the statechart; given their code below (they need the playbook).
      start: (_args, _params: undefined) => {},
      fold: (_args, _params: undefined) => {},
    },
    guards: {
      completed: ({ context }) => context.finished?.status === 'completed',
      failed: ({ context }) => context.finished?.status === 'failed',
      stepEntered: ({ context }, p: StepParams) => stepPhase(context, p.step) === 'active',
      stepOk: ({ context }, p: StepParams) => stepPhase(context, p.step) === 'completed',
      stepFailed: ({ context }, p: StepParams) => stepPhase(context, p.step) === 'failed',
    },
  });
  // The reducer decides; its context is assigned and its effects enqueued, never run here.
  const apply = (reduce: (ctx: ExecutionContext, ev: ExecutionEvent) => Reduction) =>
    machineSetup.enqueueActions(({ context, event, enqueue }) => {
      const r = reduce(context, event);
      enqueue.assign(() => r.context);
      for (const e of r.effects) enqueue({ type: 'effect', params: e });
    });
  const chart = compileStatechart(playbook);
  const machine = machineSetup.createMachine({
    ...(chart as object),
    // xstate's transition() builds a throwaway actor whose initial snapshot it computes without
    // input: there is nothing to start then, and throwing there would cost an exception per call.
    context: ({ input }) => initialContext(input ?? NO_INPUT),
  } as Parameters<typeof machineSetup.createMachine>[0]);
  return machine.provide({
    actions: {
      start: apply((ctx) => (ctx.input === NO_INPUT ? { context: ctx, effects: [] } : reduceStart(playbook, ctx))),
      fold: apply((ctx, ev) => reduceEvent(playbook, ctx, ev)),
    },
  });
}

type StepParams = { step: string };

export type ExecutionMachine = ReturnType<typeof createExecutionMachine>;
