// Where an execution's time went while nothing of it ran: queued by flow control (execution.queued
// to execution.admitted) and paused by an operator (execution.paused to execution.resumed). Each is
// a bar of its own on the Gantt's axis, as a real run stores the events; without them the time from
// the start to the first step was blank.
import { describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const t0 = Date.UTC(2026, 10, 28, 11, 9, 13);
const at = (ms: number) => new Date(t0 + ms).toISOString();
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

describe('the Gantt of an execution held back', () => {
  it('draws the time it was queued, from execution.queued to execution.admitted, before its first step', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('execution.queued', null, { key: 'k', limit: 'one', priority: 5 }),
      ev('execution.admitted', null, { at: at(4000), key: 'k', limit: 'one', priority: 5 }, 4050),
      ev('step.enter', 'start', null, 4050),
      ev('step.exit', 'start', { status: 'ok' }, 4100),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: at(4100) });
    const queued = bars.find((b) => b.kind === 'queued');
    expect(queued).toMatchObject({ depth: 0, start: t0, end: t0 + 4050, status: 'ok', approx: false, eventIds: [2, 3] });
    expect(queued?.label).toBe('queued on limit one, key k');
    expect(bars.map((b) => b.kind)).toEqual(['queued', 'step']);
  });

  it('names the empty key (a limit without key:) as the Waits for panel does, not "key " and nothing', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('execution.queued', null, { key: '', limit: '@audit/limited', priority: 5 }),
      ev('execution.admitted', null, { key: '', limit: '@audit/limited', priority: 5 }, 1000),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: at(1000) });
    expect(bars.find((b) => b.kind === 'queued')?.label).toBe('queued on limit @audit/limited, key (empty key)');
  });

  it('names a debounce window, and ends a queue the execution was cancelled in as cancelled', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('execution.queued', null, { limit: null, key: null, priority: 5, debounce_until: at(2000) }),
      ev('execution.cancelled', null, { reason: 'no' }, 700),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: at(700) });
    expect(bars).toHaveLength(1);
    expect(bars[0]).toMatchObject({ kind: 'queued', label: 'debounce window', start: t0, end: t0 + 700, status: 'cancelled' });
  });

  it('draws each time it was paused, from execution.paused to execution.resumed; one still open runs on', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('step.enter', 'start', null),
      ev('execution.paused', null, { requested_by: { sub: 'ann' } }, 100),
      ev('execution.resumed', null, {}, 2100),
      ev('step.exit', 'start', { status: 'ok' }, 2200),
      ev('step.enter', 'next', null, 2200),
      ev('execution.paused', null, {}, 2300),
    ];
    const { bars } = buildTimeline(events, { started_at: at(0), finished_at: null });
    const paused = bars.filter((b) => b.kind === 'paused');
    expect(paused.map((b) => [b.start - t0, b.end === null ? null : b.end - t0, b.status, b.depth])).toEqual([
      [100, 2100, 'ok', 0],
      [2300, null, 'running', 0],
    ]);
    // The step runs it held are not cut short by it.
    expect(bars.find((b) => b.kind === 'step' && b.step === 'start')).toMatchObject({ end: t0 + 2200, status: 'ok' });
  });
});
