// GET /api/executions/{id}/steps/{step}: a retried task's attempts said when each began and how
// long it ran, not how long the retry waited before it: a 1 s backoff between two 7 ms attempts
// was arithmetic for the reader. Each attempt after the first now says its delay_ms.
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { stepRunsView } from '../../../src/api/step-runs-view.ts';
import type { EventRow } from '../../../src/db/execution.repo.ts';

let id = 0;
const ev = (event_type: string, context: Record<string, unknown>, created_at: string): EventRow => ({
  execution_id: 1, event_id: ++id, catalog_id: 1, event_type, status: 'running', step: 's', command_id: 7, worker_id: 'w', context, result: null, error: null, created_at,
});
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

it('each attempt after the first says the retry delay before it', () => {
  const [run] = stepRunsView(
    [
      ev(EVENT.commandIssued, { seq: 1, command_id: 7 }, iso(0)),
      ev(EVENT.commandStarted, { seq: 1, at: iso(10) }, iso(20)),
      ev(EVENT.callAttempt, { seq: 1, task: 't', kind: 'http', attempt: 1, at: iso(10), duration_ms: 200 }, iso(2600)),
      ev(EVENT.callAttempt, { seq: 1, task: 't', kind: 'http', attempt: 2, at: iso(1210), duration_ms: 100 }, iso(2600)),
      // The last: `at` is the task's start, it ran 2,500 ms in all, its last attempt 50 ms (began at 2,460).
      ev(EVENT.callDone, { seq: 1, task: 't', kind: 'http', attempts: 3, at: iso(10), duration_ms: 2500, attempt_ms: 50 }, iso(2600)),
      ev(EVENT.commandCompleted, { seq: 1, at: iso(2515) }, iso(2600)),
    ],
    (o) => o,
  );
  const attempts = run.tasks[0].attempts;
  expect(attempts.map((a) => [a.attempt, a.started_at, a.duration_ms, a.delay_ms])).toEqual([
    [1, iso(10), 200, null],
    [2, iso(1210), 100, 1000],
    [3, iso(2460), 50, 1150],
  ]);
});

it('a delay not known (an attempt without its times) is null, never a guess', () => {
  const [run] = stepRunsView(
    [
      ev(EVENT.commandIssued, { seq: 1, command_id: 7 }, iso(0)),
      ev(EVENT.callAttempt, { seq: 1, task: 't', kind: 'shell', attempt: 1 }, iso(500)),
      ev(EVENT.callError, { seq: 1, task: 't', kind: 'shell', attempts: 2 }, iso(900)),
    ],
    (o) => o,
  );
  expect(run.tasks[0].attempts.map((a) => a.delay_ms)).toEqual([null, null]);
});
