// Starts that open one debounce window in one batch make one execution, with the last one's
// payload, as they do one after another (docs/flow-control.md, "Debounce"). A schedule's backfill
// (and any trigger's burst, written as one batch) of a debounced playbook folded a window for each
// fire: their admissions broke the window's unique index, every attempt again, so the backfill
// answered 500 and started nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
}, 120_000);
afterAll(async () => a?.close());

it("a backfill of a debounced schedule makes one execution, queued in its window, with the last fire's payload", async () => {
  const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: nightly, path: audit/issue31/nightly }
workload: { day: none }
debounce: { key: "all", seconds: 30 }
triggers:
  - { name: nightly, kind: schedule, cron: "0 2 * * *", payload: { day: "{{ trigger.scheduled_time[:10] }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  const backfill = await http(a.url, 'POST', '/api/triggers/audit/issue31/nightly/nightly/backfill', { from: '2026-01-01T00:00:00Z', to: '2026-01-04T00:00:00Z' });
  expect(backfill.status, JSON.stringify(backfill.body)).toBe(200);
  const ids = new Set(backfill.body.execution_ids as number[]);
  expect(ids.size).toBe(1);
  const [id] = ids;
  const listed = await http(a.url, 'GET', '/api/executions?path=audit/issue31/nightly');
  expect((listed.body.executions as Json[]).map((e) => e.execution_id)).toEqual([id]);
  const execution = (await http(a.url, 'GET', `/api/executions/${id}`)).body;
  expect(execution.status).toBe('queued');
  expect((execution.flow as Json).not_before).not.toBeNull();
  const started = (await http(a.url, 'GET', `/api/events/${id}`)).body.events[0] as Json;
  expect((started.context as { input: { args: Json } }).input.args).toEqual({ day: '2026-01-03' });
  await http(a.url, 'POST', `/api/executions/${id}/cancel`, {});
}, 60_000);
