// A command whose worker was killed mid-task and which the reaper handed to another worker: the
// lost claim reaches the log with no report, so its bar's grey lead-in runs from the issue to the
// second claim, and the console called all of it a wait "for a free worker, or for room on a limit
// of its task". The bar now knows which claim it is of and says the lost worker's time is in it.
import { describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { lostClaimNote } from '../../../gui/src/timeline/claim-wait.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const t0 = Date.UTC(2026, 11, 3, 7, 52, 0);
const at = (ms: number) => new Date(t0 + ms).toISOString();
let id = 0;
const ev = (event_type: string, step: string | null, context: unknown, ms = 0, worker_id: string | null = null): ExecutionEvent => ({
  event_id: ++id,
  event_type,
  status: 'running',
  step,
  command_id: 9,
  worker_id,
  context,
  result: null,
  error: null,
  created_at: at(ms),
});

describe('the Gantt of a command claimed again after its worker was lost', () => {
  it('says the time before its claim held the lost worker, not only a wait for one', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('step.enter', 'start', null),
      ev('command.issued', 'start', { seq: 1, command_id: 9, loop_index: null }),
      // Attempt 1's worker was SIGKILLed before it reported: only attempt 2 is in the log.
      ev('command.claimed', 'start', { seq: 1, attempt: 2, worker_id: 'w2', claimed_at: at(6456) }, 9920, 'w2'),
      ev('command.started', 'start', { seq: 1, at: at(6489), loop_index: null }, 9920, 'w2'),
      ev('call.done', 'start', { seq: 1, at: at(6489), kind: 'shell', task: 'long', attempts: 1, duration_ms: 3429, attempt_ms: 3429 }, 9920, 'w2'),
      ev('command.completed', 'start', { seq: 1, at: at(9918) }, 9920, 'w2'),
      ev('step.exit', 'start', { status: 'ok' }, 9920),
    ];
    const cmd = buildTimeline(events, { started_at: at(0), finished_at: at(9920) }).bars.find((b) => b.kind === 'command');
    expect(cmd).toMatchObject({ queuedFrom: t0, start: t0 + 6489, claimAttempt: 2, worker: 'w2' });
    expect(lostClaimNote(cmd!)).toBe("until its claim 2: a worker that held it before was lost and it was claimed again, so this holds that worker's time too");
  });

  it('keeps a first claim a wait for a worker or for room on a limit', () => {
    const events = [
      ev('execution.started', null, {}),
      ev('step.enter', 'start', null),
      ev('command.issued', 'start', { seq: 1, command_id: 9, loop_index: null }),
      ev('command.claimed', 'start', { seq: 1, attempt: 1, worker_id: 'w1', claimed_at: at(500) }, 900, 'w1'),
      ev('command.started', 'start', { seq: 1, at: at(510), loop_index: null }, 900, 'w1'),
      ev('command.completed', 'start', { seq: 1, at: at(890) }, 900, 'w1'),
    ];
    const cmd = buildTimeline(events, { started_at: at(0), finished_at: at(900) }).bars.find((b) => b.kind === 'command');
    expect(cmd?.claimAttempt).toBe(1);
    expect(lostClaimNote(cmd!)).toBeNull();
  });
});
