import { describe, expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { stepRunsView } from '../../../src/api/step-runs-view.ts';
import type { EventRow } from '../../../src/db/execution.repo.ts';

let id = 0;
const ev = (event_type: string, context: Record<string, unknown>, created_at: string): EventRow => ({
  execution_id: 1, event_id: ++id, catalog_id: 1, event_type, status: 'running', step: 's', command_id: 7, worker_id: 'w', context, result: null, error: null, created_at,
});

describe('the runs of a step', () => {
  it('a claim recorded after its batch-reported events leaves the run completed', () => {
    // A batch's items take ids reserved at acceptance; command.claimed comes with the routing's effects, after them.
    const runs = stepRunsView(
      [
        ev(EVENT.commandIssued, { seq: 1, command_id: 7 }, '2026-01-01T00:00:00.000Z'),
        ev(EVENT.commandStarted, { seq: 1, at: '2026-01-01T00:00:00.010Z' }, '2026-01-01T00:00:00.050Z'),
        ev(EVENT.commandCompleted, { seq: 1, at: '2026-01-01T00:00:00.020Z' }, '2026-01-01T00:00:00.050Z'),
        ev(EVENT.commandClaimed, { seq: 1, claimed_at: '2026-01-01T00:00:00.005Z', worker_id: 'w' }, '2026-01-01T00:00:00.050Z'),
      ],
      (o) => o,
    );
    expect(runs[0]).toMatchObject({ status: 'completed', claimed_at: '2026-01-01T00:00:00.005Z', started_at: '2026-01-01T00:00:00.010Z' });
  });

  it('a claim after the run started (a reclaim) shows it claimed again', () => {
    const runs = stepRunsView(
      [
        ev(EVENT.commandClaimed, { seq: 1, claimed_at: '2026-01-01T00:00:00.005Z' }, '2026-01-01T00:00:00.006Z'),
        ev(EVENT.commandStarted, { seq: 1, at: '2026-01-01T00:00:00.010Z' }, '2026-01-01T00:00:00.011Z'),
        ev(EVENT.commandClaimed, { seq: 1, claimed_at: '2026-01-01T00:00:30.000Z' }, '2026-01-01T00:00:30.001Z'),
      ],
      (o) => o,
    );
    expect(runs[0]).toMatchObject({ status: 'claimed', claimed_at: '2026-01-01T00:00:30.000Z' });
  });
});

describe('the runs of a step that waits', () => {
  const wait = (event_type: string, context: Record<string, unknown>, created_at: string): EventRow => ({ ...ev(event_type, context, created_at), command_id: null, worker_id: null });
  const set = wait(EVENT.timerSet, { seq: 1, wake_at: '2026-01-01T00:01:00.000Z' }, '2026-01-01T00:00:00.000Z');

  it('waits from the event that set it; ends as the step.exit the machine recorded after the event that ended it', () => {
    expect(stepRunsView([set], (o) => o)).toEqual([expect.objectContaining({ seq: 1, status: 'waiting', started_at: '2026-01-01T00:00:00.000Z', finished_at: null })]);
    const fired = stepRunsView([set, wait(EVENT.timerFired, { seq: 1 }, '2026-01-01T00:01:00.002Z'), wait(EVENT.stepExit, { status: 'ok' }, '2026-01-01T00:01:00.002Z')], (o) => o);
    expect(fired).toEqual([expect.objectContaining({ status: 'completed', finished_at: '2026-01-01T00:01:00.002Z' })]);
    const awaited = wait(EVENT.signalAwaited, { seq: 3, signal: 'go', timeout_at: null }, '2026-01-01T00:00:00.000Z');
    const timedOut = stepRunsView([awaited, wait(EVENT.waitTimedOut, { seq: 3 }, '2026-01-01T00:00:05.000Z'), wait(EVENT.stepExit, { status: 'timeout' }, '2026-01-01T00:00:05.000Z')], (o) => o);
    expect(timedOut).toEqual([expect.objectContaining({ seq: 3, status: 'failed', finished_at: '2026-01-01T00:00:05.000Z' })]);
  });

  it('a run of the step that ended without waiting takes no other run\'s exit; one still waiting at the end was cut short', () => {
    const runs = stepRunsView(
      [
        wait(EVENT.stepEnter, {}, '2026-01-01T00:00:00.000Z'),
        wait(EVENT.stepExit, { status: 'ok' }, '2026-01-01T00:00:00.000Z'), // a signal kept from before, in a log older than `at_once`: no run
        set,
        wait(EVENT.signalAwaited, { seq: 2, signal: 'go' }, '2026-01-01T00:00:00.001Z'),
        wait(EVENT.signalReceived, { seq: 2, signal: 'go' }, '2026-01-01T00:00:01.000Z'),
        wait(EVENT.stepExit, { status: 'ok' }, '2026-01-01T00:00:01.000Z'),
      ],
      (o) => o,
      true,
    );
    expect(runs.map((r) => [r.seq, r.status])).toEqual([[1, 'cancelled'], [2, 'completed']]);
  });

  it('a wait that ended as it began (step.exit `at_once`) is a run of no seq, begun and ended then, in its place among the others', () => {
    const untilError = { message: 'late.wait.until must render to a time', code: 'wait_until' };
    const runs = stepRunsView(
      [
        wait(EVENT.signalAwaited, { seq: 2, signal: 'go' }, '2026-01-01T00:00:00.000Z'),
        wait(EVENT.signalReceived, { seq: 2, signal: 'go' }, '2026-01-01T00:00:01.000Z'),
        wait(EVENT.stepExit, { status: 'ok' }, '2026-01-01T00:00:01.000Z'),
        // Entered again by an arc, it took a signal kept from before: no seq, no event but these.
        wait(EVENT.stepEnter, {}, '2026-01-01T00:00:01.000Z'),
        wait(EVENT.stepExit, { status: 'ok', at_once: 'kept_signal' }, '2026-01-01T00:00:01.000Z'),
        wait(EVENT.stepEnter, {}, '2026-01-01T00:00:02.000Z'),
        { ...wait(EVENT.stepExit, { status: 'error', at_once: 'until_failed' }, '2026-01-01T00:00:02.000Z'), error: untilError },
      ],
      (o) => o,
      true,
    );
    expect(runs).toEqual([
      expect.objectContaining({ seq: 2, status: 'completed', at_once: null, error: null, finished_at: '2026-01-01T00:00:01.000Z' }),
      expect.objectContaining({ seq: null, status: 'completed', at_once: 'kept_signal', started_at: '2026-01-01T00:00:01.000Z', finished_at: '2026-01-01T00:00:01.000Z', error: null }),
      expect.objectContaining({ seq: null, status: 'failed', at_once: 'until_failed', started_at: '2026-01-01T00:00:02.000Z', finished_at: '2026-01-01T00:00:02.000Z', error: untilError }),
    ]);
  });
});

describe('the runs of a step read as the machine folded them', () => {
  const done = [
    ev(EVENT.commandIssued, { seq: 1, command_id: 7 }, '2026-01-01T00:00:00.000Z'),
    ev(EVENT.commandStarted, { seq: 1, at: '2026-01-01T00:00:00.010Z' }, '2026-01-01T00:00:00.011Z'),
    ev(EVENT.commandCompleted, { seq: 1, at: '2026-01-01T00:00:00.020Z' }, '2026-01-01T00:00:00.021Z'),
  ];
  const completed = { status: 'completed', started_at: '2026-01-01T00:00:00.010Z', finished_at: '2026-01-01T00:00:00.020Z' };

  it('a late or refused report (routing marked it) moves nothing', () => {
    const late = ev(EVENT.commandFailed, { seq: 1, late: true }, '2026-01-01T00:01:00.000Z');
    const lateStart = ev(EVENT.commandStarted, { seq: 1, late: true, at: '2026-01-01T00:01:00.000Z' }, '2026-01-01T00:01:00.000Z');
    const refused = ev(EVENT.commandCompleted, { seq: 1, refused: 'stale_claim' }, '2026-01-01T00:01:00.000Z');
    expect(stepRunsView([...done, lateStart, late, refused], (o) => o, true)[0]).toMatchObject(completed);
  });

  it('a report appended after the execution ended (terminal fast path) moves nothing; the ending step.exit is read', () => {
    const after = { ...ev(EVENT.commandFailed, { seq: 1 }, '2026-01-01T00:01:00.000Z'), status: 'completed' as const };
    expect(stepRunsView([...done, after], (o) => o, true)[0]).toMatchObject(completed);
    const wait = (event_type: string, context: Record<string, unknown>, status: 'running' | 'completed') => ({ ...ev(event_type, context, '2026-01-01T00:00:01.000Z'), command_id: null, status });
    const waited = stepRunsView([wait(EVENT.timerSet, { seq: 2 }, 'running'), wait(EVENT.timerFired, { seq: 2 }, 'running'), wait(EVENT.stepExit, { status: 'ok' }, 'completed')], (o) => o, true);
    expect(waited[0]).toMatchObject({ seq: 2, status: 'completed' });
  });
});

describe('the runs of a playbook task with timeout_seconds and retry', () => {
  const e = (event_type: string, context: Record<string, unknown>, created_at: string): EventRow => ({ ...ev(event_type, context, created_at), command_id: null, worker_id: null });
  it('its timers (timer.set with `for`) are no runs: each child is one, and the step.exit is the last child\'s', () => {
    const runs = stepRunsView(
      [
        e(EVENT.stepEnter, {}, '2026-01-01T00:00:00.000Z'),
        e(EVENT.childStarted, { seq: 1, child_execution_id: 11 }, '2026-01-01T00:00:00.000Z'),
        e(EVENT.timerSet, { seq: 2, wake_at: '2026-01-01T00:00:01.000Z', task: 'kid', for: 'timeout', attempt: 1 }, '2026-01-01T00:00:00.000Z'),
        e(EVENT.timerFired, { seq: 2 }, '2026-01-01T00:00:01.000Z'),
        e(EVENT.timerSet, { seq: 3, wake_at: '2026-01-01T00:00:02.000Z', task: 'kid', for: 'retry', attempt: 2 }, '2026-01-01T00:00:01.000Z'),
        e(EVENT.childFinished, { seq: 1, child_execution_id: 11, status: 'cancelled' }, '2026-01-01T00:00:01.100Z'),
        e(EVENT.timerFired, { seq: 3 }, '2026-01-01T00:00:02.000Z'),
        e(EVENT.childStarted, { seq: 4, child_execution_id: 12, attempt: 2 }, '2026-01-01T00:00:02.000Z'),
        e(EVENT.timerSet, { seq: 5, wake_at: '2026-01-01T00:00:03.000Z', task: 'kid', for: 'timeout', attempt: 2 }, '2026-01-01T00:00:02.000Z'),
        e(EVENT.childFinished, { seq: 4, child_execution_id: 12, status: 'completed' }, '2026-01-01T00:00:02.500Z'),
        e(EVENT.stepExit, { status: 'ok' }, '2026-01-01T00:00:02.500Z'),
      ],
      (o) => o,
      true,
    );
    expect(runs.map((r) => [r.seq, r.status, r.child_execution_id])).toEqual([[1, 'cancelled', 11], [4, 'completed', 12]]);
  });
});
