// An execution that waited to be admitted (its playbook's concurrency, a debounce window) had a
// span from its start that said nothing of it: minutes in the queue read as slow work (as a pause
// did before svc.execution.paused_ms). Its span now has `queued` and `admitted` events and
// `svc.execution.queued_ms`, from its start to its admission.
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { ExecutionTrace, type SpanRecord } from '../../../src/telemetry/execution-trace.ts';
import type { CommittedEvent } from '../../../src/telemetry/trace-sink.ts';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const log = (rows: Omit<CommittedEvent, 'execution_id' | 'event_id' | 'error'>[]): CommittedEvent[] => rows.map((e, i) => ({ execution_id: 1, event_id: i + 1, error: null, ...e }));
const rootOf = (events: CommittedEvent[]) => {
  const out: SpanRecord[] = [];
  new ExecutionTrace('salt', 1, 1, 'p/queued', null).take(events, null, Date.now(), out);
  return out.find((s) => s.name === 'playbook p/queued');
};
const started = { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/queued', rootExecutionId: 1 } }, created_at: at(0) };

it('the execution span says when it was queued and admitted, and how long it waited', () => {
  const root = rootOf(
    log([
      started,
      { event_type: EVENT.executionQueued, step: null, context: { limit: 'one', key: 'acme', priority: 5 }, created_at: at(0) },
      { event_type: EVENT.executionAdmitted, step: null, context: { limit: 'one', key: 'acme', priority: 5 }, created_at: at(4000) },
      { event_type: EVENT.stepEnter, step: 'a', context: null, created_at: at(4000) },
      { event_type: EVENT.stepExit, step: 'a', context: { status: 'ok' }, created_at: at(4100) },
      { event_type: EVENT.playbookCompleted, step: null, context: null, created_at: at(4100) },
    ]),
  );
  expect(root?.events).toEqual([
    { name: 'queued', timeMs: T0 },
    { name: 'admitted', timeMs: T0 + 4000 },
  ]);
  expect(root?.attributes['svc.execution.queued_ms']).toBe(4000);
  // Names and numbers only: the limit's key is data.
  expect(JSON.stringify(root)).not.toContain('acme');
});

it('an execution admitted at once has neither', () => {
  const plain = rootOf(log([started, { event_type: EVENT.playbookCompleted, step: null, context: null, created_at: at(10) }]));
  expect(plain?.events).toEqual([]);
  expect(plain?.attributes).not.toHaveProperty('svc.execution.queued_ms');
});
