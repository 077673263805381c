// The console's Gantt (gui/src/timeline/model.ts) labels a `playbook` task's own timers (its
// timeout_seconds, its retry's delay: timer.set with `for`, `task`, `attempt`) by purpose, not as
// a step's `timer`; a step's own wait keeps its label.
import { describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 28, 14, 0, 0) + ms).toISOString();
let id = 0;
const ev = (event_type: string, step: string | null, context: unknown, ms = 0): ExecutionEvent => ({
  event_id: ++id,
  event_type,
  status: 'running',
  step,
  command_id: null,
  worker_id: null,
  context,
  result: null,
  error: null,
  created_at: at(ms),
});

describe('the Gantt of a playbook task with timeout_seconds and retry', () => {
  it('labels its timers by purpose: its timeout, its retry with the attempt it starts', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('step.enter', 'start', null),
      ev('child.started', 'start', { seq: 1, path: 'a/kid', task: 'kid', child_execution_id: 11 }),
      ev('timer.set', 'start', { seq: 2, wake_at: at(1000), task: 'kid', for: 'timeout', attempt: 1 }),
      ev('timer.fired', null, { seq: 2, wake_at: at(1000) }, 1000),
      ev('timer.set', 'start', { seq: 3, wake_at: at(2000), task: 'kid', for: 'retry', attempt: 2 }, 1000),
      ev('child.finished', null, { seq: 1, status: 'cancelled', child_execution_id: 11 }, 1100),
      ev('timer.fired', null, { seq: 3, wake_at: at(2000) }, 2000),
      ev('child.started', 'start', { seq: 4, path: 'a/kid', task: 'kid', child_execution_id: 12, attempt: 2 }, 2000),
      ev('child.finished', null, { seq: 4, status: 'completed', child_execution_id: 12 }, 2500),
      ev('step.exit', 'start', { status: 'ok' }, 2500),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: at(2500) });
    expect(bars.filter((b) => b.kind === 'wait').map((b) => [b.label, b.task, b.attempt])).toEqual([
      ['kid: timeout', 'kid', 1],
      ['retry 2 of kid', 'kid', 2],
    ]);
  });

  it("a step's own timer keeps its label", () => {
    const events = [ev('execution.started', null, {}), ev('step.enter', 'cool', null), ev('timer.set', 'cool', { seq: 1, wake_at: at(1000) }), ev('timer.fired', null, { seq: 1, wake_at: at(1000) }, 1000)];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: null });
    expect(bars.filter((b) => b.kind === 'wait').map((b) => [b.label, b.task])).toEqual([['timer', undefined]]);
  });
});
