// An overlap `skip` schedule whose previous run is paused (or queued) recorded its due time as
// `overlap skip: execution N still running`: a reader went looking for work that was not running.
// The reason now names the run's real status (src/triggers/scheduler.ts, unfinishedText). A tick
// by hand with an injected clock, as schedule-overlap.test.ts does; the run's task waits for a
// worker (none runs), so it stays unfinished until paused and cancelled here.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const PATH = 'overlap/audit_skip_status';
const tick = (at: Date) => runScheduleTick(a.deps, () => at);

async function fires(): Promise<{ fire_key: string; outcome: string; execution_id: string | null; error: string | null }[]> {
  const { rows } = await a.deps.db.query<{ fire_key: string; outcome: string; execution_id: string | null; error: string | null }>(`SELECT fire_key, outcome, execution_id, error FROM core.trigger_fire WHERE path = $1 ORDER BY fire_key`, [PATH]);
  return rows;
}

it('a due time skipped for a paused run says the run is paused, not running', async () => {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: overlap, path: ${PATH} }
triggers:
  - { name: t, kind: schedule, cron: "*/30 * * * * *", overlap: skip }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
  const t0 = new Date(Math.floor((Date.now() - 3600_000) / 30_000) * 30_000);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1 AND name = 't'`, [PATH, t0]);
  expect(await tick(new Date(t0.getTime() + 10))).toMatchObject({ started: 1 });
  const run = (await fires())[0]!.execution_id;
  const paused = await http(a.url, 'POST', `/api/executions/${run}/pause`, {});
  expect(paused.status, JSON.stringify(paused.body)).toBe(200);

  expect(await tick(new Date(t0.getTime() + 30_010))).toMatchObject({ started: 0, skipped: 1 });
  const skipped = (await fires()).find((f) => f.outcome === 'skipped')!;
  expect(skipped.error).toBe(`overlap skip: execution ${run} still paused`);
  await http(a.url, 'POST', `/api/executions/${run}/cancel`, {});
});
