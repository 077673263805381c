import { assign, setup } from 'xstate';
import type { BatchFailureCode } from './error-codes.ts';

export const BATCH_STATES = ['accepted', 'processing', 'completed', 'failed'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

// Why a batch failed: the spec's batch failure codes that processing can end with (the registry's `batch` codes).
export type { BatchFailureCode };

export type BatchRequestEvent =
  // A processor takes the batch for a handling call; again after a processor died or its job was retried.
  | { type: 'claim' }
  | { type: 'complete' }
  | { type: 'fail'; code: BatchFailureCode };

export type BatchRequestContext = { attempts: number; errorCode: BatchFailureCode | null };

/**
 * One accepted batch of worker events: accepted → processing → completed | failed. The rows of
 * core.batch_request hold its state; the repository moves a row only from the states this
 * machine allows for the event (`statesAllowing`), so the rules live here alone.
 */
export const batchRequestMachine = setup({
  types: { context: {} as BatchRequestContext, events: {} as BatchRequestEvent },
  actions: {
    countAttempt: assign(({ context }) => ({ attempts: context.attempts + 1 })),
    recordFailure: assign(({ event }) => ({ errorCode: event.type === 'fail' ? event.code : null })),
  },
}).createMachine({
  id: 'batchRequest',
  context: { attempts: 0, errorCode: null },
  initial: 'accepted',
  states: {
    accepted: { on: { claim: { target: 'processing', actions: 'countAttempt' } } },
    processing: {
      on: {
        claim: { target: 'processing', reenter: true, actions: 'countAttempt' },
        complete: 'completed',
        fail: { target: 'failed', actions: 'recordFailure' },
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
  },
});

// Which states each event moves, read once from the definition (as machines/report-verdict.ts does).
const FROM: ReadonlyMap<BatchRequestEvent['type'], readonly BatchState[]> = (() => {
  const out = new Map<BatchRequestEvent['type'], BatchState[]>();
  for (const state of BATCH_STATES) {
    for (const eventType of batchRequestMachine.root.states[state].transitions.keys()) {
      const type = eventType as BatchRequestEvent['type'];
      out.set(type, [...(out.get(type) ?? []), state]);
    }
  }
  return out;
})();

/** The states from which `event` moves a batch (the repository's WHERE state = ANY(...)). */
export function statesAllowing(event: BatchRequestEvent['type']): readonly BatchState[] {
  return FROM.get(event) ?? [];
}

/** True for completed and failed: nothing moves the batch any more. */
export function isTerminalBatchState(state: BatchState): boolean {
  return batchRequestMachine.root.states[state].type === 'final';
}
