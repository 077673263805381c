import { setup } from 'xstate';
import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { initialContext, reduceEvent, reduceStart, type Reduction } from './execution/reduce.ts';
import type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput } from './execution/types.ts';

export type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput } from './execution/types.ts';

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

/** Bump when the context shape or the reducer's meaning changes: old snapshots are then replayed from the log. */
export const EXECUTION_MACHINE_VERSION = 2;

/**
 * The execution of one playbook as a pure state machine: running → completed | failed |
 * cancelled. The step graph lives in the context; every side effect is returned by
 * transition() as an `effect` action for actors/ to perform.
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
    },
    guards: {
      completed: ({ context }) => context.finished?.status === 'completed',
      failed: ({ context }) => context.finished?.status === 'failed',
    },
  });
  // One action for every input event: the reducer decides; effects are enqueued, never run here.
  const apply = (reduce: (ctx: ExecutionContext, ev: ExecutionEvent) => Reduction) =>
    machineSetup.enqueueActions(({ context, event, enqueue }) => {
      const r = reduce(context, event);
      enqueue.assign(() => r.context);
      for (const e of r.effects) enqueue({ type: 'effect', params: e });
    });
  return machineSetup.createMachine({
    id: 'execution',
    // xstate's transition() builds a throwaway actor whose initial snapshot it computes without
    // input: there is nothing to start then, and throwing there would cost an exception per call.
    context: ({ input }) => initialContext(input ?? NO_INPUT),
    initial: 'running',
    states: {
      running: {
        entry: apply((ctx) => (ctx.input === NO_INPUT ? { context: ctx, effects: [] } : reduceStart(playbook, ctx))),
        always: [
          { guard: 'completed', target: 'completed' },
          { guard: 'failed', target: 'failed' },
        ],
        on: {
          'command.completed': { actions: apply((ctx, ev) => reduceEvent(playbook, ctx, ev)) },
          'command.failed': { actions: apply((ctx, ev) => reduceEvent(playbook, ctx, ev)) },
          'child.finished': { actions: apply((ctx, ev) => reduceEvent(playbook, ctx, ev)) },
          'execution.abandoned': { actions: apply((ctx, ev) => reduceEvent(playbook, ctx, ev)) },
          'execution.cancelled': { target: 'cancelled', actions: apply((ctx, ev) => reduceEvent(playbook, ctx, ev)) },
        },
      },
      completed: { type: 'final' },
      failed: { type: 'final' },
      cancelled: { type: 'final' },
    },
  });
}

export type ExecutionMachine = ReturnType<typeof createExecutionMachine>;
