// A list's query parameter sent empty is a parameter not sent: `?status=&path=&limit=&cursor=`
// (DESIGN.md writes the list so; a form or a URL template leaves an unset filter so) lists as if
// none were given, where it was a 422 (limit, status, cursor) or a filter no row matched (path).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let ids: number[];
beforeAll(async () => {
  t = await startTestApp();
  const ex = executionApi(t.url);
  await ex.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: e, path: empty/one }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n');
  ids = [await ex.run('empty/one'), await ex.run('empty/one')];
});
afterAll(async () => t?.close());

it('lists executions with every filter sent empty as with none', async () => {
  const none = await http(t.url, 'GET', '/api/executions');
  expect(none.body.executions.map((e: { execution_id: number }) => e.execution_id)).toEqual([...ids].reverse());
  const empty = await http(t.url, 'GET', '/api/executions?status=&path=&path_prefix=&started_after=&started_before=&trigger=&requested_by=&parent=&q=&label=&limit=&cursor=');
  expect(empty.status, JSON.stringify(empty.body)).toBe(200);
  expect(empty.body).toEqual(none.body);
  // An empty one beside a value is dropped; the value filters.
  const labelled = await http(t.url, 'GET', '/api/executions?label=&label=tenant:acme');
  expect(labelled.body).toMatchObject({ executions: [], count: 0 });
});

it("reads an execution's events with since_event_id and limit sent empty as with neither", async () => {
  const none = await http(t.url, 'GET', `/api/events/${ids[0]}`);
  const empty = await http(t.url, 'GET', `/api/events/${ids[0]}?since_event_id=&limit=`);
  expect(empty.status, JSON.stringify(empty.body)).toBe(200);
  expect(empty.body).toEqual(none.body);
  expect(none.body.events.length).toBeGreaterThan(0);
});
