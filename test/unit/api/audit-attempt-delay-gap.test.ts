// A task retried more than 21 times reports its first 10 and last 10 failed attempts (the worker's
// keepAttempt): the steps view gave the first attempt after the ones left out (attempt 21 after 10)
// a delay_ms from attempt 10's end, the ten attempts between and their waits (11,450 ms for a 1 s
// backoff), as "the retry's wait before it". An attempt whose one before is not listed has none.
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

it('an attempt listed after attempts left out says no delay, the others theirs', () => {
  // 31 attempts of 45 ms, each 1 s after the one before ended: attempt n starts at (n - 1) * 1045.
  const start = (n: number) => (n - 1) * 1045;
  const listed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30];
  const [run] = stepRunsView(
    [
      ev(EVENT.commandIssued, { seq: 1, command_id: 7 }, iso(0)),
      ev(EVENT.commandStarted, { seq: 1, at: iso(0) }, iso(40_000)),
      ...listed.map((n) => ev(EVENT.callAttempt, { seq: 1, task: 't', kind: 'http', attempt: n, at: iso(start(n)), duration_ms: 45 }, iso(40_000))),
      ev(EVENT.callError, { seq: 1, task: 't', kind: 'http', attempts: 31, at: iso(0), duration_ms: start(31) + 45, attempt_ms: 45 }, iso(40_000)),
      ev(EVENT.commandFailed, { seq: 1, at: iso(start(31) + 45) }, iso(40_000)),
    ],
    (o) => o,
  );
  const delays = new Map(run.tasks[0].attempts.map((a) => [a.attempt, a.delay_ms]));
  expect([...delays.keys()]).toEqual([...listed, 31]);
  expect(delays.get(1)).toBeNull();
  expect(delays.get(10)).toBe(1000);
  expect(delays.get(21)).toBeNull();
  expect(delays.get(22)).toBe(1000);
  expect(delays.get(31)).toBe(1000);
});
