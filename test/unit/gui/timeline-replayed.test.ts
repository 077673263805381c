// The console's Gantt model (gui/src/timeline/model.ts) for a retry: a step whose outcome was
// replayed from the retried execution ran nothing, and its row says it was replayed, not that it
// ran in 0 ms. The events are what a real retry from a later step stored.
import { describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const at = new Date(Date.UTC(2026, 10, 28, 2, 33, 32)).toISOString();
let id = 0;
const ev = (event_type: string, step: string | null, context: unknown, result: unknown = null): ExecutionEvent => ({
  event_id: ++id,
  event_type,
  status: 'running',
  step,
  command_id: null,
  worker_id: null,
  context,
  result,
  error: null,
  created_at: at,
});

describe('the Gantt of a retry', () => {
  it('labels the replayed steps', () => {
    const events = [
      ev('execution.started', null, { retry_of: 2, from_step: 'kid' }),
      ev('step.enter', 'start', null),
      ev('step.replayed', 'start', null, { stdout: 'hi\n' }),
      ev('step.exit', 'start', { status: 'ok' }),
      ev('step.enter', 'kid', null),
    ];
    const { bars } = buildTimeline(events, { started_at: at, finished_at: null });
    expect(bars.filter((b) => b.kind === 'step').map((b) => b.label)).toEqual(['start (replayed)', 'kid']);
  });
});
