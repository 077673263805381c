// GET /api/executions/{id}/steps/{step} mixed two precisions in one run: times taken from when an
// event was stored (a command's issue, a child's start, a wait's begin) came with the log's
// microseconds ('2026-12-03T07:50:34.672533Z'), the others (claims, reported moments) in
// milliseconds. A command a worker claimed in the statement that issued it read claimed at
// 07:50:34.672Z, issued at 07:50:34.672533Z: 0.533 ms before its issue to a client that reads
// microseconds (Python's datetime, PostgreSQL), a negative queue time. Every time of a run is now
// written as the rest of the API writes times, to the millisecond.
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { stepRunsView } from '../../../src/api/step-runs-view.ts';
import type { EventRow } from '../../../src/db/execution.repo.ts';

let id = 0;
const ev = (event_type: string, context: Record<string, unknown>, created_at: string, command_id: number | null = 7): EventRow => ({
  execution_id: 1, event_id: ++id, catalog_id: 1, event_type, status: 'running', step: 's', command_id, worker_id: 'w', context, result: null, error: null, created_at,
});

it("a run's times are to the millisecond, so a claim in the issuing statement is not before the issue", () => {
  const [cmd] = stepRunsView(
    [
      ev(EVENT.commandIssued, { seq: 1, command_id: 7 }, '2026-12-03T07:50:34.672533Z'),
      ev(EVENT.commandClaimed, { seq: 1, attempt: 1, worker_id: 'w', claimed_at: '2026-12-03T07:50:34.672Z' }, '2026-12-03T07:50:35.790111Z'),
      ev(EVENT.commandStarted, { seq: 1, at: '2026-12-03T07:50:34.722Z' }, '2026-12-03T07:50:35.790111Z'),
      ev(EVENT.commandCompleted, { seq: 1, at: '2026-12-03T07:50:35.770Z' }, '2026-12-03T07:50:35.790111Z'),
    ],
    (o) => o,
  );
  expect(cmd).toMatchObject({ issued_at: '2026-12-03T07:50:34.672Z', claimed_at: '2026-12-03T07:50:34.672Z', started_at: '2026-12-03T07:50:34.722Z', finished_at: '2026-12-03T07:50:35.770Z' });
  const [wait] = stepRunsView(
    [ev(EVENT.timerSet, { seq: 2, wake_at: '2026-12-03T07:50:37.716Z' }, '2026-12-03T07:50:36.716772Z', null), ev(EVENT.timerFired, { seq: 2, wake_at: '2026-12-03T07:50:37.716Z' }, '2026-12-03T07:50:37.730405Z', null)],
    (o) => o,
  );
  expect(wait).toMatchObject({ issued_at: '2026-12-03T07:50:36.716Z', started_at: '2026-12-03T07:50:36.716Z', finished_at: '2026-12-03T07:50:37.730Z' });
});
