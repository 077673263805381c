// A loop of `playbook` tasks starts a child per item, and its `child.started` says which
// (`loop_index`). A loop's command spans carry `svc.loop.index` (operations.md, *Traces*), but the
// playbook-task spans of a loop of children did not: in a trace the children of items 0 and 1 read
// the same, and the one whose child failed could not be told by its item.
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { ExecutionTrace, type SpanRecord } from '../../../src/telemetry/execution-trace.ts';
import type { CommittedEvent } from '../../../src/telemetry/trace-sink.ts';

const at = (ms: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + ms).toISOString();

it('each child of a loop of playbook tasks is a span with its loop item', () => {
  const events: CommittedEvent[] = [
    { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/parent', rootExecutionId: 1 } }, created_at: at(0) },
    { event_type: EVENT.stepEnter, step: 'sub', context: null, created_at: at(0) },
    { event_type: EVENT.loopItem, step: 'sub', context: { index: 0 }, created_at: at(1) },
    { event_type: EVENT.childStarted, step: 'sub', context: { seq: 1, path: 'p/kid', task: 'kid', loop_index: 0, child_execution_id: 2 }, created_at: at(1) },
    { event_type: EVENT.loopItem, step: 'sub', context: { index: 1 }, created_at: at(1) },
    { event_type: EVENT.childStarted, step: 'sub', context: { seq: 2, path: 'p/kid', task: 'kid', loop_index: 1, child_execution_id: 3 }, created_at: at(1) },
    { event_type: EVENT.childFinished, step: null, context: { seq: 1, status: 'completed', child_execution_id: 2 }, created_at: at(5) },
    { event_type: EVENT.childFinished, step: null, context: { seq: 2, status: 'failed', child_execution_id: 3 }, error: { code: 'exit_code' }, created_at: at(6) },
    { event_type: EVENT.loopDone, step: 'sub', context: { count: 2, failed: true }, created_at: at(6) },
    { event_type: EVENT.stepExit, step: 'sub', context: { status: 'error' }, error: { code: 'exit_code' }, created_at: at(6) },
    { event_type: EVENT.playbookFailed, step: null, context: null, error: { code: 'exit_code', step: 'sub' }, created_at: at(6) },
  ].map((e, i) => ({ execution_id: 1, event_id: i + 1, error: null, ...e }));
  const out: SpanRecord[] = [];
  new ExecutionTrace('salt', 1, 1, '', null).take(events, null, Date.now(), out);
  const tasks = out.filter((s) => s.name === 'task kid');
  expect(tasks.map((s) => [s.attributes['svc.child.execution.id'], s.attributes['svc.loop.index'], s.attributes['svc.status']])).toEqual([
    [2, 0, 'completed'],
    [3, 1, 'failed'],
  ]);
  // A playbook task outside a loop has no item.
  const single: SpanRecord[] = [];
  new ExecutionTrace('salt', 1, 1, '', null).take(
    [
      { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/parent', rootExecutionId: 1 } }, created_at: at(0) },
      { event_type: EVENT.stepEnter, step: 'sub', context: null, created_at: at(0) },
      { event_type: EVENT.childStarted, step: 'sub', context: { seq: 1, path: 'p/kid', task: 'kid', child_execution_id: 2 }, created_at: at(1) },
      { event_type: EVENT.childFinished, step: null, context: { seq: 1, status: 'completed', child_execution_id: 2 }, created_at: at(5) },
    ].map((e, i) => ({ execution_id: 1, event_id: i + 1, error: null, ...e })),
    null,
    Date.now(),
    single,
  );
  expect(single.find((s) => s.name === 'task kid')?.attributes).not.toHaveProperty('svc.loop.index');
});
