import { assign, setup } from 'xstate';

export type CommandStatus = 'PENDING' | 'CLAIMED' | 'RUNNING' | 'WAITING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export type CommandContext = { attempt: number; workerId: string | null };

export type CommandEvent =
  | { type: 'claim'; workerId: string }
  | { type: 'reclaim'; workerId: string } // the claim policy found the holder stale
  | { type: 'start'; attempt: number }
  | { type: 'complete'; attempt: number }
  | { type: 'fail'; attempt: number }
  | { type: 'cancel' };

const fresh = ({ context, event }: { context: CommandContext; event: CommandEvent }) =>
  'attempt' in event && event.attempt === context.attempt;

/**
 * One command's lifecycle: PENDING → CLAIMED → RUNNING → COMPLETED | FAILED | CANCELLED. Each
 * claim bumps `attempt`; a report carrying an older attempt (a stale claimer) is ignored.
 */
export const commandMachine = setup({
  types: { context: {} as CommandContext, events: {} as CommandEvent, input: {} as Partial<CommandContext> },
  guards: { fresh },
  actions: {
    takeClaim: assign(({ context, event }) => ({
      attempt: context.attempt + 1,
      workerId: 'workerId' in event ? event.workerId : context.workerId,
    })),
  },
}).createMachine({
  id: 'command',
  context: ({ input }) => ({ attempt: input.attempt ?? 0, workerId: input.workerId ?? null }),
  initial: 'PENDING',
  states: {
    PENDING: { on: { claim: { target: 'CLAIMED', actions: 'takeClaim' }, cancel: 'CANCELLED' } },
    CLAIMED: {
      on: {
        start: { guard: 'fresh', target: 'RUNNING' },
        complete: { guard: 'fresh', target: 'COMPLETED' },
        fail: { guard: 'fresh', target: 'FAILED' },
        reclaim: { target: 'CLAIMED', reenter: true, actions: 'takeClaim' },
        cancel: 'CANCELLED',
      },
    },
    RUNNING: {
      on: {
        complete: { guard: 'fresh', target: 'COMPLETED' },
        fail: { guard: 'fresh', target: 'FAILED' },
        reclaim: { target: 'CLAIMED', actions: 'takeClaim' },
        cancel: 'CANCELLED',
      },
    },
    WAITING: { on: { complete: 'COMPLETED', fail: 'FAILED', cancel: 'CANCELLED' } },
    COMPLETED: { type: 'final' },
    FAILED: { type: 'final' },
    CANCELLED: { type: 'final' },
  },
});

export const TERMINAL_COMMAND_STATUSES: readonly CommandStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];
