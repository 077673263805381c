// An event's `status` is "the execution's status after the event" (the events API's schema,
// src/api/present.ts), as an execution.cancelled carries cancelled: the events that themselves move
// an execution between statuses carry the status they moved it to. execution.queued said running,
// execution.admitted queued, execution.paused running and execution.resumed paused: the status
// before each.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let ex: ExecutionApi;
beforeAll(async () => {
  t = await startTestApp();
  ex = executionApi(t.url);
  expect((await http(t.url, 'PUT', '/api/limits/one', { concurrency: 1 })).status).toBeLessThan(300);
  await ex.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: status/held }
concurrency: { limit: one, key: "k" }
workflow:
  - step: start
    wait: { signal: go, timeout: 1h }
`);
});
afterAll(async () => {
  await t?.close();
});

const statusOf = async (id: number, type: string) => (await ex.events(id)).filter((e) => e.event_type === type).map((e) => e.status);

it('gives the status each control event moved the execution to', async () => {
  const first = await ex.run('status/held');
  const second = await ex.run('status/held');
  expect(await statusOf(second, 'execution.queued')).toEqual(['queued']);
  expect((await http(t.url, 'POST', `/api/executions/${first}/pause`, {})).status).toBe(200);
  expect(await statusOf(first, 'execution.paused')).toEqual(['paused']);
  expect((await http(t.url, 'POST', `/api/executions/${first}/resume`, {})).status).toBe(200);
  expect(await statusOf(first, 'execution.resumed')).toEqual(['running']);
  // The first ends: the second is admitted and runs.
  expect((await http(t.url, 'POST', `/api/executions/${first}/signals/go`, { payload: {} })).status).toBe(202);
  await until('the second admitted', async () => ((await statusOf(second, 'execution.admitted')).length ? true : undefined), 20_000, 50);
  expect(await statusOf(second, 'execution.admitted')).toEqual(['running']);
  // What the events say agrees with the execution's own status now.
  expect((await http(t.url, 'GET', `/api/executions/${second}`)).body.status).toBe('running');
  expect((await ex.events(second)).at(-1)?.status).toBe('running');
});
