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
