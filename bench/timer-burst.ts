// Timers due together (issue 28): TIMER_EXECUTIONS executions each wait on a timer, all due in
// the same second; the figure is the time from that second to the commit of the last
// `timer.fired` (each one ends its execution), read from core.event. The executions are started
// with a wake-up time far ahead, then their core.wait rows are moved to one instant: the
// timekeeper learns of it at its next look (at most TIMEKEEPER_MAX_SLEEP_MS), as a server that
// did not write the waits would, so the figure includes that look.
import pg from 'pg';
import { EVENT } from '../machines/event-types.ts';
import { TIMEKEEPER_MAX_SLEEP_MS } from '../src/waits/timekeeper.ts';
import type { BenchService } from './service.ts';
import { quantile, round, sleep } from './stats.ts';

export const TIMER_EXECUTIONS = 10_000;
export const TIMER_TARGET_MS = 2_000;
// Starts in flight at once (each request is grouped with others by the server's start batcher).
const START_CONCURRENCY = 64;
// The shared due instant, from when the rows are moved: time for the timekeeper to be asleep.
const DUE_AFTER_MS = 1_500;

export type TimerBurstResult = { executions: number; started_per_s: number; fired: number; all_fired_ms: number; p50_fired_ms: number; p99_fired_ms: number; look_interval_ms: number };

/** Starts `n` waiting executions, makes their timers due in one instant, and times the firing. */
export async function measureTimerBurst(s: BenchService, databaseUrl: string, progress: (msg: string) => void, n = TIMER_EXECUTIONS): Promise<TimerBurstResult> {
  await s.register(`apiVersion: svc/v1
metadata: { name: timer_burst, path: bench/timer_burst }
workflow:
  - step: start
    wait: { until: "{{ workload.at }}" }
`);
  const far = new Date(Date.now() + 3_600_000).toISOString();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: START_CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        await s.run('bench/timer_burst', { at: far });
      }
    }),
  );
  const startedPerS = n / ((performance.now() - t0) / 1000);
  progress(`${n} executions waiting (${Math.round(startedPerS)} starts/s); their timers all due in ${DUE_AFTER_MS} ms`);
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows: due } = await c.query<{ at: Date }>(
      `UPDATE core.wait w SET wake_at = date_trunc('milliseconds', now()) + $1 * interval '1 millisecond'
         FROM core.execution e WHERE e.execution_id = w.execution_id AND e.path = 'bench/timer_burst' RETURNING w.wake_at AS at`,
      [DUE_AFTER_MS],
    );
    const dueAt = due[0].at;
    for (let i = 0; ; i++) {
      await sleep(250);
      const { rows } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = 'bench/timer_burst' AND status = 'running'`);
      if (rows[0].n === 0 || i > 240) break;
    }
    const { rows } = await c.query<{ ms: number }>(
      `SELECT extract(epoch FROM (v.created_at - $1::timestamptz)) * 1000 AS ms FROM core.event v JOIN core.execution e USING (execution_id)
        WHERE e.path = 'bench/timer_burst' AND v.event_type = $2`,
      [dueAt, EVENT.timerFired],
    );
    const ms = rows.map((r) => Number(r.ms));
    return {
      executions: n,
      started_per_s: round(startedPerS),
      fired: ms.length,
      all_fired_ms: round(Math.max(...ms)),
      p50_fired_ms: round(quantile(ms, 0.5)),
      p99_fired_ms: round(quantile(ms, 0.99)),
      look_interval_ms: TIMEKEEPER_MAX_SLEEP_MS,
    };
  } finally {
    await c.end();
  }
}
