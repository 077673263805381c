// A `playbook` task's own timers (its timeout_seconds, its retry's delay: timer.set with `for`,
// `task`, `attempt`) read as what they are in `svc logs` and `svc status`, not as a step that
// "wakes at" a time; a step's own `wait:` timer reads as it did.
import { describe, expect, it } from 'vitest';
import { waitText } from '../../../src/cli/execution-status-view.ts';
import { Timeline } from '../../../src/cli/logs-view.ts';
import type { ExecutionEvent } from '../../../src/cli/run-api.ts';

const AT = '2026-11-28T14:00:00.000Z';
let id = 0;
const event = (type: string, context: Record<string, unknown>): ExecutionEvent => ({ event_id: ++id, event_type: type, step: 'start', context, created_at: AT });

/** Each line's DETAIL cell (after ID, AT, GAP, EVENT and STEP). */
function details(events: ExecutionEvent[]): string[] {
  const t = new Timeline();
  return events.map((e) => t.line(e).trim().split(/\s+/).slice(5).join(' '));
}

describe('svc logs: timers', () => {
  it("a playbook task's timeout and retry timers say so, set and fired (timer.fired names the seq only)", () => {
    expect(
      details([
        event('timer.set', { seq: 2, wake_at: '2026-11-28T14:01:00.000Z', task: 'kid', for: 'timeout', attempt: 1 }),
        event('timer.fired', { seq: 2, wake_at: '2026-11-28T14:01:00.000Z' }),
        event('timer.set', { seq: 3, wake_at: '2026-11-28T14:01:05.000Z', task: 'kid', for: 'retry', attempt: 2 }),
        event('timer.fired', { seq: 3, wake_at: '2026-11-28T14:01:05.000Z' }),
      ]),
    ).toEqual([
      'playbook task kid: timeout at 2026-11-28T14:01:00.000Z',
      'playbook task kid: timeout was due at 2026-11-28T14:01:00.000Z',
      'retry 2 of kid at 2026-11-28T14:01:05.000Z',
      'retry 2 of kid was due at 2026-11-28T14:01:05.000Z',
    ]);
  });

  it("a step's own wait reads as before", () => {
    expect(details([event('timer.set', { seq: 1, wake_at: AT }), event('timer.fired', { seq: 1, wake_at: AT })])).toEqual([`wakes at ${AT}`, `was due at ${AT}`]);
  });
});

describe('svc status: what a step waits for', () => {
  const now = Date.parse(AT);
  const wait = { step: 'start', kind: 'timer', signal: null, wake_at: '2026-11-28T14:01:00.000Z', approval_roles: null };
  it("names a playbook task's timers by purpose", () => {
    expect(waitText({ ...wait, for: 'timeout', task: 'kid', attempt: 1 }, now)).toBe('playbook task kid: timeout at 2026-11-28T14:01:00Z (in 1m00s)');
    expect(waitText({ ...wait, for: 'retry', task: 'kid', attempt: 3 }, now)).toBe('retry 3 of kid at 2026-11-28T14:01:00Z (in 1m00s)');
  });
  it("a step's own timer as before", () => {
    expect(waitText(wait, now)).toBe('timer until 2026-11-28T14:01:00Z (in 1m00s)');
  });
});
