// A pause held an execution for seconds and its trace did not say so: the execution's span, and the
// step run the pause held (its command issued only once resumed), were just long. The execution's
// span now has `paused` and `resumed` events at those moments and `svc.execution.paused_ms`, the
// time it spent paused in all (a cancel while paused ends the pause).
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { ExecutionTrace, type SpanRecord } from '../../../src/telemetry/execution-trace.ts';
import type { CommittedEvent } from '../../../src/telemetry/trace-sink.ts';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const log = (rows: Omit<CommittedEvent, 'execution_id' | 'event_id' | 'error'>[]): CommittedEvent[] => rows.map((e, i) => ({ execution_id: 1, event_id: i + 1, error: null, ...e }));
const rootOf = (events: CommittedEvent[]) => {
  const out: SpanRecord[] = [];
  new ExecutionTrace('salt', 1, 1, 'p/paused', null).take(events, null, Date.now(), out);
  return out.find((s) => s.name === 'playbook p/paused');
};

it('the execution span says when it was paused and resumed, and for how long in all', () => {
  const root = rootOf(
    log([
      { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/paused', rootExecutionId: 1 } }, created_at: at(0) },
      { event_type: EVENT.stepEnter, step: 'a', context: null, created_at: at(0) },
      { event_type: EVENT.executionPaused, step: null, context: { reason: 'look', requested_by: { sub: 'alice' } }, created_at: at(100) },
      { event_type: EVENT.executionResumed, step: null, context: { requested_by: { sub: 'alice' } }, created_at: at(3100) },
      { event_type: EVENT.executionPaused, step: null, context: null, created_at: at(4000) },
      { event_type: EVENT.executionResumed, step: null, context: null, created_at: at(4500) },
      { event_type: EVENT.stepExit, step: 'a', context: { status: 'ok' }, created_at: at(5000) },
      { event_type: EVENT.playbookCompleted, step: null, context: null, created_at: at(5000) },
    ]),
  );
  expect(root?.events).toEqual([
    { name: 'paused', timeMs: T0 + 100 },
    { name: 'resumed', timeMs: T0 + 3100 },
    { name: 'paused', timeMs: T0 + 4000 },
    { name: 'resumed', timeMs: T0 + 4500 },
  ]);
  expect(root?.attributes['svc.execution.paused_ms']).toBe(3500);
  // Names and numbers only: who paused it and why stay out of the trace.
  expect(JSON.stringify(root)).not.toMatch(/alice|look/);
});

it('a cancel while paused ends the pause; an execution never paused has neither', () => {
  const cancelled = rootOf(
    log([
      { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/paused', rootExecutionId: 1 } }, created_at: at(0) },
      { event_type: EVENT.executionPaused, step: null, context: null, created_at: at(1000) },
      { event_type: EVENT.executionCancelled, step: null, context: { reason: 'x' }, created_at: at(1800) },
    ]),
  );
  expect(cancelled?.attributes['svc.execution.paused_ms']).toBe(800);
  const plain = rootOf(
    log([
      { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/paused', rootExecutionId: 1 } }, created_at: at(0) },
      { event_type: EVENT.playbookCompleted, step: null, context: null, created_at: at(10) },
    ]),
  );
  expect(plain?.events).toEqual([]);
  expect(plain?.attributes).not.toHaveProperty('svc.execution.paused_ms');
});
