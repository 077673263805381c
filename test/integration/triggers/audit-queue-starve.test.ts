// A look of the timekeeper takes at most 100 due schedules, oldest first. An overlap `queue`
// schedule whose previous run is unfinished stays due at its oldest waiting time, so it is among
// the oldest at every look: 100 of them waiting filled every look, and a schedule due after them
// never fired (the loop looked again at once, at the same 100, without end). Real PostgreSQL, the
// scheduler's own loop on an injected clock; the runs stay unfinished (no worker runs their task).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runScheduleTick, startScheduler } from '../../../src/triggers/scheduler.ts';
import { ScheduleClock } from '../../../src/triggers/schedule-clock.ts';

const QUEUES = 100; // a look's worth (scheduler.ts DUE_PER_TICK)

let a: TestApp;
let scheduler: { stop(): Promise<void> } | undefined;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await scheduler?.stop();
  await a?.close();
});

const playbook = (path: string, triggers: string[]) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: starve, path: ${path} }
triggers:
${triggers.map((t) => `  - ${t}`).join('\n')}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

async function register(path: string, triggers: string[]): Promise<void> {
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: playbook(path, triggers) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function fires(path: string): Promise<{ name: string; fire_key: string; outcome: string }[]> {
  const { rows } = await a.deps.db.query<{ name: string; fire_key: string; outcome: string }>(`SELECT name, fire_key, outcome FROM core.trigger_fire WHERE path = $1 ORDER BY name, fire_key`, [path]);
  return rows;
}

it('a schedule due after 100 queue schedules waiting for their runs still fires', async () => {
  const names = Array.from({ length: QUEUES }, (_, i) => `q${String(i).padStart(3, '0')}`);
  await register('starve/queues', names.map((n) => `{ name: ${n}, kind: schedule, cron: "* * * * * *", overlap: queue }`));
  await register('starve/other', ['{ name: v, kind: schedule, cron: "* * * * * *" }']);
  const t0 = new Date(Math.floor((Date.now() - 3600_000) / 1000) * 1000);
  const at = (ms: number) => new Date(t0.getTime() + ms);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, ['starve/queues', t0]);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, ['starve/other', at(2000)]);

  // Each queue schedule starts a run that stays unfinished; their next due time (t0 + 1 s) waits for it.
  const first = await runScheduleTick(a.deps, () => at(10));
  expect(first.started).toBe(QUEUES);

  // Later: the queue schedules wait (since t0 + 1 s), the other is due (t0 + 2 s and t0 + 3 s).
  scheduler = startScheduler(a.deps, new ScheduleClock(), () => at(3010));
  const deadline = Date.now() + 10_000;
  while ((await fires('starve/other')).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await scheduler.stop();
  scheduler = undefined;

  // The other schedule's due times (t0 + 2 s, t0 + 3 s): the newest started, the older skipped (overlap skip, one run per tick).
  expect(await fires('starve/other')).toEqual([
    { name: 'v', fire_key: at(2000).toISOString(), outcome: 'skipped' },
    { name: 'v', fire_key: at(3000).toISOString(), outcome: 'started' },
  ]);
  // The queue schedules still wait: each fired once, at t0.
  const queued = await fires('starve/queues');
  expect(queued).toHaveLength(QUEUES);
  expect(new Set(queued.map((f) => f.fire_key))).toEqual(new Set([t0.toISOString()]));
});
