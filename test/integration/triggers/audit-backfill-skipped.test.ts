// Backfill of times a schedule recorded as skipped (docs/triggers.md, "Pause and resume": the
// due times an overlap queue schedule held when paused are recorded as skipped, "Backfill them if
// you want them"; "Overlap": a time skipped for a run still running). Those times never started:
// a backfill of them starts them, once; a time that started (or was refused) stays as it was.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';
import { pauseTrigger } from '../../../src/triggers/trigger-operations.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

async function register(path: string, trigger: string): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: refill, path: ${path} }
triggers:
  - { name: t, kind: schedule, ${trigger}, payload: { at: "{{ trigger.scheduled_time }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

type FireSeen = { fire_key: string; outcome: string; execution_id: string | null };
async function fires(path: string): Promise<FireSeen[]> {
  const { rows } = await a.deps.db.query<FireSeen>(`SELECT fire_key, outcome, execution_id FROM core.trigger_fire WHERE path = $1 ORDER BY fire_key`, [path]);
  return rows;
}
async function startedWorkloads(path: string): Promise<string[]> {
  const { rows } = await a.deps.db.query<{ at: string }>(
    `SELECT e.context->'input'->'workload'->>'at' AS at FROM core.execution x
       JOIN core.event e ON e.execution_id = x.execution_id AND e.event_type = 'execution.started'
      WHERE x.path = $1 ORDER BY 1`,
    [path],
  );
  return rows.map((r) => r.at);
}
async function listed(path: string): Promise<Json> {
  return (await http(a.url, 'GET', '/api/triggers?kind=schedule')).body.triggers.find((t: Json) => t.path === path);
}
const backfill = (path: string, from: Date, to: Date) => http(a.url, 'POST', `/api/triggers/${path}/t/backfill`, { from: from.toISOString(), to: to.toISOString() });
const plus = (t: Date, ms: number) => new Date(t.getTime() + ms);
const iso = (t: Date) => t.toISOString();

it('the times a paused queue schedule held start when backfilled, once; the time that started stays as it was', async () => {
  const path = 'audit/refill_queue';
  await register(path, `cron: "*/10 * * * * *", overlap: queue`);
  const t0 = new Date(Math.floor((Date.now() - 3600_000) / 10_000) * 10_000);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, [path, t0]);
  await runScheduleTick(a.deps, () => plus(t0, 10));
  for (const s of [10, 20, 30]) await runScheduleTick(a.deps, () => plus(t0, s * 1000 + 10));
  // Paused at the clock of these ticks: the three times waiting for the first run are recorded as skipped.
  expect(await pauseTrigger(a.deps, path, 't', true, plus(t0, 30_020))).toMatchObject({ fires: 1, skipped: 3 });
  expect((await fires(path)).map((f) => f.outcome)).toEqual(['started', 'skipped', 'skipped', 'skipped']);

  const res = await backfill(path, t0, plus(t0, 40_000));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // t0 started before: made before, skipped; the three held times start now.
  expect(res.body).toMatchObject({ skipped: 1, refused: [] });
  expect(res.body.execution_ids).toHaveLength(3);
  expect((await fires(path)).map((f) => [f.fire_key, f.outcome])).toEqual([0, 10, 20, 30].map((s) => [iso(plus(t0, s * 1000)), 'started']));
  expect(await startedWorkloads(path)).toEqual([0, 10, 20, 30].map((s) => iso(plus(t0, s * 1000))));
  expect(await listed(path)).toMatchObject({ fires: 4, skipped: 0 });

  // The same range again, twice at once: nothing new.
  const again = await Promise.all([backfill(path, t0, plus(t0, 40_000)), backfill(path, t0, plus(t0, 40_000))]);
  for (const r of again) expect(r.body).toEqual({ execution_ids: [], skipped: 4, refused: [] });
  expect(await startedWorkloads(path)).toHaveLength(4);
});

it('a time overlap skip recorded as skipped starts when backfilled; two backfills at once start it once', async () => {
  const path = 'audit/refill_skip';
  await register(path, `cron: "*/10 * * * * *"`);
  const t0 = new Date(Math.floor((Date.now() - 7200_000) / 10_000) * 10_000);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, [path, t0]);
  await runScheduleTick(a.deps, () => plus(t0, 10));
  await runScheduleTick(a.deps, () => plus(t0, 10_010));
  expect((await fires(path)).map((f) => f.outcome)).toEqual(['started', 'skipped']);
  const both = await Promise.all([backfill(path, plus(t0, 10_000), plus(t0, 10_001)), backfill(path, plus(t0, 10_000), plus(t0, 10_001))]);
  for (const r of both) expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(both.map((r) => r.body.execution_ids.length).sort()).toEqual([0, 1]);
  expect(both.map((r) => r.body.skipped).sort()).toEqual([0, 1]);
  expect((await fires(path)).map((f) => f.outcome)).toEqual(['started', 'started']);
  expect(await startedWorkloads(path)).toEqual([iso(t0), iso(plus(t0, 10_000))]);
  expect(await listed(path)).toMatchObject({ fires: 2, skipped: 0 });
});
