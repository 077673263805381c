// Schedule fire lateness: SCHEDULES schedules firing every second for SECONDS on the bench's
// server (its own timekeeper, as `svc server` runs it); each fire's lateness is its recorded
// insert time (clock_timestamp() in the transaction that starts its execution, just before the
// commit) minus its scheduled time, read from core.trigger_fire. No worker runs: the executions
// stay running, so the database grows as a busy one would.
import pg from 'pg';
import type { BenchService } from './service.ts';
import { quantile, round, sleep } from './stats.ts';

export const TRIGGER_SCHEDULES = 100;
export const TRIGGER_SECONDS = 20;
export const TRIGGER_TARGET_P99_MS = 250;

export type TriggerLatenessResult = { schedules: number; seconds: number; fires: number; expected_fires: number; p50_ms: number; p99_ms: number; max_ms: number };

/** Registers SCHEDULES every-second schedules (one playbook each), lets them fire, then reads every fire's lateness. */
export async function measureTriggerLateness(s: BenchService, databaseUrl: string, progress: (msg: string) => void, schedules = TRIGGER_SCHEDULES, seconds = TRIGGER_SECONDS): Promise<TriggerLatenessResult> {
  for (let i = 0; i < schedules; i++) {
    await s.register(`apiVersion: svc/v1
metadata: { name: tick${i}, path: bench/tick${i} }
triggers:
  - { name: every_second, kind: schedule, cron: "* * * * * *", overlap: allow, catch_up: none }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
  }
  progress(`${schedules} schedules registered; firing for ${seconds} s`);
  const startAt = Date.now() + 1500;
  await sleep(seconds * 1000 + 1500);
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    // Pause them all so that nothing fires while the figures are read (and after).
    await c.query(`UPDATE core.trigger SET paused = true WHERE path LIKE 'bench/tick%'`);
    const { rows } = await c.query<{ ms: number }>(
      `SELECT extract(epoch FROM (fired_at - scheduled_time)) * 1000 AS ms FROM core.trigger_fire
        WHERE path LIKE 'bench/tick%' AND scheduled_time >= $1 AND scheduled_time < $2`,
      [new Date(startAt), new Date(startAt + (seconds - 1) * 1000)],
    );
    const ms = rows.map((r) => Number(r.ms));
    return {
      schedules,
      seconds,
      fires: ms.length,
      expected_fires: schedules * (seconds - 1),
      p50_ms: round(quantile(ms, 0.5)),
      p99_ms: round(quantile(ms, 0.99)),
      max_ms: round(Math.max(...ms)),
    };
  } finally {
    await c.end();
  }
}
