import { describe, expect, it } from 'vitest';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import {
  BATCH_STATES,
  batchRequestMachine,
  isTerminalBatchState,
  statesAllowing,
  type BatchRequestEvent,
  type BatchState,
} from '../../../machines/batch-request.machine.ts';

type Snapshot = SnapshotFrom<typeof batchRequestMachine>;

const EVENTS: BatchRequestEvent[] = [{ type: 'claim' }, { type: 'complete' }, { type: 'fail', code: 'processing_timeout' }, { type: 'fail', code: 'processing_error' }];
const MAX_ATTEMPTS = 3;
const stateOf = (s: Snapshot) => s.value as BatchState;
const send = (s: Snapshot, e: BatchRequestEvent) => transition(batchRequestMachine, s, e)[0];

/** The lifecycle as the spec and docs state it, written apart from the machine. */
function reference(state: BatchState, e: BatchRequestEvent): BatchState {
  if (state === 'accepted') return e.type === 'claim' ? 'processing' : 'accepted';
  if (state === 'processing') return e.type === 'claim' ? 'processing' : e.type === 'complete' ? 'completed' : 'failed';
  return state;
}

// Claims are bounded so the graph is finite (a claim again is how a crashed processor's batch is retaken).
const options = {
  events: (s: Snapshot) => (s.context.attempts < MAX_ATTEMPTS ? EVENTS : EVENTS.filter((e) => e.type !== 'claim')),
  serializeState: (s: Snapshot) => `${String(s.value)}|${s.context.attempts}|${s.context.errorCode ?? '-'}`,
  serializeEvent: (e: BatchRequestEvent) => JSON.stringify(e),
};

describe('batch request machine', () => {
  it('starts accepted; completed and failed are terminal', () => {
    const [s] = initialTransition(batchRequestMachine);
    expect(stateOf(s)).toBe('accepted');
    expect(BATCH_STATES.filter(isTerminalBatchState)).toEqual(['completed', 'failed']);
  });

  it('every path agrees with the reference lifecycle, step by step', () => {
    const paths = getSimplePaths(batchRequestMachine, options);
    expect(paths.length).toBeGreaterThan(10);
    for (const path of paths) {
      let s = initialTransition(batchRequestMachine)[0];
      let expected: BatchState = 'accepted';
      for (const step of path.steps) {
        expected = reference(expected, step.event as BatchRequestEvent);
        s = send(s, step.event as BatchRequestEvent);
        expect(stateOf(s)).toBe(expected);
      }
    }
  });

  it('reaches every state, and a failure keeps its code', () => {
    const reached = new Set(getShortestPaths(batchRequestMachine, options).map((p) => String(p.state.value)));
    expect([...reached].sort()).toEqual([...BATCH_STATES].sort());
    const [s0] = initialTransition(batchRequestMachine);
    const failed = send(send(s0, { type: 'claim' }), { type: 'fail', code: 'processing_timeout' });
    expect(failed.context.errorCode).toBe('processing_timeout');
    expect(send(send(send(s0, { type: 'claim' }), { type: 'claim' }), { type: 'complete' }).context.attempts).toBe(2);
  });

  it('tells the repository which states each event moves (its SQL guards)', () => {
    expect(statesAllowing('claim')).toEqual(['accepted', 'processing']);
    expect(statesAllowing('complete')).toEqual(['processing']);
    expect(statesAllowing('fail')).toEqual(['processing']);
    // Each listed state really moves on that event, and no other state does.
    for (const e of EVENTS) {
      for (const state of BATCH_STATES) {
        const moves = reference(state, e) !== state || (state === 'processing' && e.type === 'claim');
        expect(statesAllowing(e.type).includes(state)).toBe(moves);
      }
    }
  });
});
