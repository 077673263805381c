// GET /api/triggers?kind= (a form or a URL template leaving the filter unset) lists every trigger,
// as every other list takes a filter sent empty (src/api/empty-query-values.ts, docs/operations.md
// "What the API refuses"); it was 422 'kind: Invalid type: Expected ("schedule" | "webhook" |
// "nats") but received ""'. A kind that is none is refused naming the kinds, in the words the
// other lists use ('must be one of ...'), not valibot's.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await executionApi(t.url).register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: empty_kind, path: triggers/empty_kind }
triggers:
  - { name: nightly, kind: schedule, cron: "0 2 * * *" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
});
afterAll(async () => t?.close());

it('lists every trigger with kind sent empty, as with none; a kind that is none is 422 naming the kinds', async () => {
  const none = await http(t.url, 'GET', '/api/triggers');
  expect(none.body.count).toBeGreaterThan(0);
  const empty = await http(t.url, 'GET', '/api/triggers?kind=');
  expect(empty.status, JSON.stringify(empty.body)).toBe(200);
  expect(empty.body).toEqual(none.body);
  const wrong = await http(t.url, 'GET', '/api/triggers?kind=cron');
  expect(wrong.status).toBe(422);
  expect(wrong.body.detail.errors).toEqual(['kind: must be one of schedule, webhook, nats']);
});
