// The console's Gantt model (gui/src/timeline/model.ts) on events as real runs stored them: a loop
// of playbook tasks (child.started does not carry the item; the loop.item just before it does)
// and a retry from a later step (a replayed step ran nothing).
import { describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 28, 2, 48, 21) + ms).toISOString();
let id = 0;
/** An event of the log, `ms` after the run's start. */
const ev = (event_type: string, step: string | null, context: unknown, o: { ms?: number; result?: unknown; error?: unknown } = {}): ExecutionEvent => ({
  event_id: ++id,
  event_type,
  status: 'running',
  step,
  command_id: null,
  worker_id: null,
  context,
  result: o.result ?? null,
  error: o.error ?? null,
  created_at: at(o.ms ?? 0),
});

describe('the Gantt of a loop of child executions', () => {
  it("gives each child's bar its loop item", () => {
    const events = [
      ev('execution.started', null, {}),
      ev('step.enter', 'start', null),
      ...[0, 1, 2].flatMap((i) => [ev('loop.item', 'start', { index: i }), ev('child.started', 'start', { seq: i + 1, path: 'a/kid', task: 'sub', child_execution_id: 19 + i })]),
      ev('child.finished', null, { seq: 2, status: 'failed', child_execution_id: 20 }, { ms: 80, error: { code: 'exit_code', message: 'command exited with code 4' } }),
      ev('child.finished', null, { seq: 1, status: 'completed', child_execution_id: 19 }, { ms: 106 }),
      ev('child.finished', null, { seq: 3, status: 'completed', child_execution_id: 21 }, { ms: 106 }),
      ev('loop.done', 'start', { count: 3, failed: true }, { ms: 114 }),
      ev('step.exit', 'start', { status: 'error' }, { ms: 114 }),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: at(114) });
    const children = bars.filter((b) => b.kind === 'child');
    expect(children.map((b) => [b.childExecutionId, b.loopIndex, b.status])).toEqual([
      [19, 0, 'ok'],
      [20, 1, 'error'],
      [21, 2, 'ok'],
    ]);
  });
});

describe('the Gantt of a retry', () => {
  it('labels the replayed steps', () => {
    const events = [
      ev('execution.started', null, { retry_of: 2, from_step: 'kid' }),
      ev('step.enter', 'start', null),
      ev('step.replayed', 'start', null, { result: { stdout: 'hi\n' } }),
      ev('step.exit', 'start', { status: 'ok' }),
      ev('step.enter', 'kid', null),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: null });
    expect(bars.filter((b) => b.kind === 'step').map((b) => b.label)).toEqual(['start (replayed)', 'kid']);
  });
});
