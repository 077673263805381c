// The console's Gantt model (gui/src/timeline/model.ts) for a loop of playbook tasks: each child's
// bar names its loop item, as a loop's command bars do. The events are what a real run of such a
// loop stored (child.started does not carry the item; the loop.item just before it does).
import { describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 28, 2, 48, 21) + ms).toISOString();
let id = 0;
const ev = (event_type: string, step: string | null, context: unknown, ms: number, error: unknown = null): ExecutionEvent => ({
  event_id: ++id,
  event_type,
  status: 'running',
  step,
  command_id: null,
  worker_id: null,
  context,
  result: null,
  error,
  created_at: at(ms),
});

describe('the Gantt of a loop of child executions', () => {
  it("gives each child's bar its loop item", () => {
    const events = [
      ev('execution.started', null, {}, 0),
      ev('step.enter', 'start', null, 0),
      ...[0, 1, 2].flatMap((i) => [ev('loop.item', 'start', { index: i }, 0), ev('child.started', 'start', { seq: i + 1, path: 'a/kid', task: 'sub', child_execution_id: 19 + i }, 0)]),
      ev('child.finished', null, { seq: 2, status: 'failed', child_execution_id: 20 }, 80, { code: 'exit_code', message: 'command exited with code 4' }),
      ev('child.finished', null, { seq: 1, status: 'completed', child_execution_id: 19 }, 106),
      ev('child.finished', null, { seq: 3, status: 'completed', child_execution_id: 21 }, 106),
      ev('loop.done', 'start', { count: 3, failed: true }, 114),
      ev('step.exit', 'start', { status: 'error' }, 114),
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
