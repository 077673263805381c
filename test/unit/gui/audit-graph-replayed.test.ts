// The console's execution graph of a retry drew the steps it replayed (`step.replayed`: they took
// the outcome of the execution retried, their tasks never ran here) `completed`, exactly as the
// steps that ran. They are now marked: class `replayed`, and said in the node's accessible label
// and tooltip (gui/src/graph/node-text.ts, which StepGraphView draws them with).
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { nodeClass, nodeLabel, nodeTitle } from '../../../gui/src/graph/node-text.ts';
import { fromEvents, replayedFromEvents } from '../../../gui/src/graph/step-status.ts';

let id = 0;
const ev = (event_type: string, step: string | null): ExecutionEvent => ({ event_id: ++id, event_type, step, context: {}, created_at: '2026-12-01T07:00:00.000Z' }) as ExecutionEvent;

it('marks the steps a retry replayed, and only those', () => {
  const events = [
    ev(EVENT.executionStarted, null),
    ev(EVENT.stepEnter, 'first'),
    ev(EVENT.stepReplayed, 'first'),
    ev(EVENT.stepExit, 'first'),
    ev(EVENT.stepEnter, 'second'),
    ev(EVENT.commandIssued, 'second'),
    ev(EVENT.stepExit, 'second'),
  ];
  const replayed = replayedFromEvents(events);
  expect([...replayed]).toEqual(['first']);
  const states = fromEvents(events);
  const facts = (step: string) => ({ step, status: states[step], replayed: replayed.has(step), selected: false });
  expect(nodeClass(facts('first'))).toBe('node st-completed replayed');
  expect(nodeLabel(facts('first'))).toBe('step first, completed, replayed from the execution retried');
  expect(nodeTitle('first', replayed.has('first'))).toBe('first (replayed from the execution retried)');
  expect(nodeClass(facts('second'))).toBe('node st-completed');
  expect(nodeLabel(facts('second'))).toBe('step second, completed');
  expect(nodeLabel({ step: 'many', status: 'active', replayed: false, selected: true, loop: 'loop n', progress: '1/3 done' })).toBe('step many, active, loop n, 1/3 done');
  expect(nodeClass({ step: 'many', status: 'active', replayed: false, selected: true })).toBe('node st-active selected');
});
