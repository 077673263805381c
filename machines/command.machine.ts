import { assign, setup } from 'xstate';

/** A command's statuses: the machine's states (command-rules.ts checks that they are the same). */
export const COMMAND_STATUSES = ['PENDING', 'PAUSED', 'CLAIMED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;

export type CommandStatus = (typeof COMMAND_STATUSES)[number];

export type CommandContext = { attempt: number; workerId: string | null };

/** Who a report says it comes from: the claim's attempt, its worker, or both. */
export type Reporter = { attempt?: number | null; workerId?: string | null };

export type CommandEvent =
  | { type: 'claim'; workerId: string }
  | { type: 'reclaim'; workerId: string } // the claim policy found the holder stale
  | ({ type: 'start' } & Reporter) // any progress report: command.started, call.done, call.error
  | ({ type: 'heartbeat' } & Reporter)
  | ({ type: 'complete' } & Reporter)
  | ({ type: 'fail' } & Reporter)
  | { type: 'cancel' }
  // Its execution was paused while the command waited unclaimed, or resumed (migrations/0047).
  | { type: 'pause' }
  | { type: 'resume' }
  // Its execution is paused and the claim policy found its holder gone: given back to the pause.
  | { type: 'withdraw' };

/**
 * A report is the holder's when it names the claim (attempt, worker or both) and everything it
 * names matches: an older attempt or another worker is a stale or foreign claimer.
 */
export function isHolder(context: CommandContext, r: Reporter): boolean {
  const attempt = r.attempt ?? null;
  const workerId = r.workerId ?? null;
  if (attempt === null && workerId === null) return false;
  if (attempt !== null && attempt !== context.attempt) return false;
  return workerId === null || workerId === context.workerId;
}

const holder = ({ context, event }: { context: CommandContext; event: CommandEvent }) =>
  (event.type === 'start' || event.type === 'heartbeat' || event.type === 'complete' || event.type === 'fail') && isHolder(context, event);

/**
 * One command's lifecycle: PENDING → CLAIMED → RUNNING → COMPLETED | FAILED | CANCELLED. Each
 * claim bumps `attempt`; a report from anyone but the current holder moves nothing. A pause of
 * its execution withdraws it while nobody has claimed it (PAUSED: no claim takes it, since the
 * claim's pick reads PENDING only), and the resume gives it back (PENDING); a claim whose holder
 * is gone while its execution is paused is withdrawn so too (the reaper), not taken over.
 * Claim arbitration between concurrent claimers is the database's (one row lock, one winner), and
 * whether a holder is stale is the claim policy's (it sends `reclaim`); everything else is this
 * machine's: command-rules.ts reads it into the sets the SQL's guards are generated from (claim,
 * reclaim, cancel) and the report arcs report-verdict.ts decides by.
 */
export const commandMachine = setup({
  types: { context: {} as CommandContext, events: {} as CommandEvent, input: {} as Partial<CommandContext> },
  guards: { holder },
  actions: {
    takeClaim: assign(({ context, event }) => ({
      attempt: context.attempt + 1,
      workerId: 'workerId' in event && event.workerId ? event.workerId : context.workerId,
    })),
  },
}).createMachine({
  id: 'command',
  // Without input (xstate's transition() computes a throwaway initial snapshot so): a fresh command.
  context: ({ input }) => ({ attempt: input?.attempt ?? 0, workerId: input?.workerId ?? null }),
  initial: 'PENDING',
  states: {
    PENDING: { on: { claim: { target: 'CLAIMED', actions: 'takeClaim' }, pause: 'PAUSED', cancel: 'CANCELLED' } },
    PAUSED: { on: { resume: 'PENDING', cancel: 'CANCELLED' } },
    CLAIMED: {
      on: {
        start: { guard: 'holder', target: 'RUNNING' },
        // Explicit self-targets: a report the holder may send is a transition (snapshot.can() sees it).
        heartbeat: { guard: 'holder', target: 'CLAIMED' },
        complete: { guard: 'holder', target: 'COMPLETED' },
        fail: { guard: 'holder', target: 'FAILED' },
        reclaim: { target: 'CLAIMED', reenter: true, actions: 'takeClaim' },
        withdraw: 'PAUSED',
        cancel: 'CANCELLED',
      },
    },
    RUNNING: {
      on: {
        start: { guard: 'holder', target: 'RUNNING' },
        heartbeat: { guard: 'holder', target: 'RUNNING' },
        complete: { guard: 'holder', target: 'COMPLETED' },
        fail: { guard: 'holder', target: 'FAILED' },
        reclaim: { target: 'CLAIMED', actions: 'takeClaim' },
        withdraw: 'PAUSED',
        cancel: 'CANCELLED',
      },
    },
    COMPLETED: { type: 'final' },
    FAILED: { type: 'final' },
    CANCELLED: { type: 'final' },
  },
});

export const TERMINAL_COMMAND_STATUSES: readonly CommandStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];
