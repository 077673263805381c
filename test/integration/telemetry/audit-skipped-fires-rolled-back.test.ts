// A registration that ends an `overlap: queue` schedule records the due times waiting for its run
// as skipped in its own transaction, and svc_trigger_fires_total{kind=schedule,outcome=skipped}
// was counted there, before the commit: a registration refused after it (an MCP document at the
// schedule's path naming a server another path holds: 409) rolled the fires back, yet the counter
// kept them. The count now follows the commit. Real PostgreSQL; ticked by hand with an injected clock.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { metricSum, scrape } from '../../helpers/metrics-text.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

const PATH = 'audit/queue-rolled-back';
let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const register = (content: string, resourceType?: string) => http(a.url, 'POST', '/api/catalog/register', { content, ...(resourceType ? { resource_type: resourceType } : {}) });
const mcp = (path: string) => `apiVersion: svc/v1
kind: Mcp
metadata: { name: held-srv, path: ${path} }
endpoint: http://127.0.0.1:9/mcp
`;
const skipped = async () => metricSum(await scrape(a.url), 'svc_trigger_fires_total', { kind: 'schedule', outcome: 'skipped' });
const fireOutcomes = async () => (await a.deps.db.query<{ outcome: string }>(`SELECT outcome FROM core.trigger_fire WHERE path = $1 ORDER BY fire_key`, [PATH])).rows.map((r) => r.outcome);

it('skipped fires of a registration that rolled back are not counted; those of one that commits are', async () => {
  expect((await register(mcp('audit/holder'), 'mcp')).status).toBe(201);
  // A queue schedule every 10 s whose first run (no worker: it stays running) holds the next five due times.
  const playbook = `apiVersion: svc/v1
kind: Playbook
metadata: { name: queued, path: ${PATH} }
triggers:
  - { name: t, kind: schedule, cron: "*/10 * * * * *", overlap: queue, max_catch_up: 3 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  expect((await register(playbook)).status).toBe(201);
  const t0 = new Date(Math.floor((Date.now() - 60_000) / 10_000) * 10_000);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, [PATH, t0]);
  const tick = (ms: number) => runScheduleTick(a.deps, () => new Date(t0.getTime() + ms));
  expect(await tick(10)).toMatchObject({ started: 1 });
  for (let s = 10; s <= 50; s += 10) expect(await tick(s * 1000 + 10)).toMatchObject({ started: 0, skipped: 0 });

  // An MCP document at the schedule's path ends it, but its server's name is another path's: 409, nothing kept.
  const refused = await register(mcp(PATH), 'mcp');
  expect(refused.status, JSON.stringify(refused.body)).toBe(409);
  expect(await fireOutcomes()).toEqual(['started']);
  expect(await skipped()).toBe(0);

  // A version without the schedule ends it for good: its skipped fires are recorded and counted.
  expect((await register(playbook.replace(/triggers:\n.*\n/, ''))).status).toBe(201);
  const outcomes = await fireOutcomes();
  expect(outcomes.filter((o) => o === 'skipped').length).toBeGreaterThanOrEqual(5);
  expect(await skipped()).toBe(outcomes.length - 1);
});
