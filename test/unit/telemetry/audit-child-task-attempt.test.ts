// A `playbook` task retried (`retry: {attempts}`) starts a new child per attempt, each under its
// own seq, and its `child.started` says which attempt it is (`attempt`, absent on the first). The
// playbook-task span of every attempt said `svc.task.attempt: 1`, so a trace could not tell the
// first child from the retries (operations.md, *Traces*: `svc.task.attempt` on task spans).
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { ExecutionTrace, type SpanRecord } from '../../../src/telemetry/execution-trace.ts';
import type { CommittedEvent } from '../../../src/telemetry/trace-sink.ts';
import { childCallSpanId } from '../../../src/telemetry/trace-ids.ts';

const at = (ms: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + ms).toISOString();

it("each attempt of a retried playbook task is a span with that attempt's number", () => {
  const events: CommittedEvent[] = [
    { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/parent', rootExecutionId: 1 } }, created_at: at(0) },
    { event_type: EVENT.stepEnter, step: 'start', context: null, created_at: at(0) },
    { event_type: EVENT.childStarted, step: 'start', context: { seq: 1, path: 'p/kid', task: 'kid', child_execution_id: 2 }, created_at: at(1) },
    { event_type: EVENT.childFinished, step: null, context: { seq: 1, status: 'failed', child_execution_id: 2 }, error: { code: 'exit_code' }, created_at: at(5) },
    { event_type: EVENT.timerSet, step: 'start', context: { for: 'retry', seq: 2, task: 'kid', attempt: 2, wake_at: at(10) }, created_at: at(5) },
    { event_type: EVENT.timerFired, step: 'start', context: { seq: 2, wake_at: at(10) }, created_at: at(10) },
    { event_type: EVENT.childStarted, step: 'start', context: { seq: 3, path: 'p/kid', task: 'kid', attempt: 2, child_execution_id: 3 }, created_at: at(11) },
    { event_type: EVENT.childFinished, step: null, context: { seq: 3, status: 'completed', child_execution_id: 3 }, created_at: at(15) },
    { event_type: EVENT.stepExit, step: 'start', context: { status: 'ok' }, created_at: at(16) },
    { event_type: EVENT.playbookCompleted, step: null, context: null, created_at: at(16) },
  ].map((e, i) => ({ execution_id: 1, event_id: i + 1, error: null, ...e }));
  const out: SpanRecord[] = [];
  new ExecutionTrace('salt', 1, 1, '', null).take(events, null, Date.now(), out);
  const tasks = out.filter((s) => s.name === 'task kid');
  expect(tasks.map((s) => [s.spanId, s.attributes['svc.child.execution.id'], s.attributes['svc.task.attempt'], s.attributes['svc.status']])).toEqual([
    [childCallSpanId('salt', 1, 1), 2, 1, 'failed'],
    [childCallSpanId('salt', 1, 3), 3, 2, 'completed'],
  ]);
});
