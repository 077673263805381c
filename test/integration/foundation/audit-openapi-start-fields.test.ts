// The start routes' body fields say in the OpenAPI document what they do: POST /api/execute takes
// the spec's `workload` and also `payload` (POST /api/run/playbook's name), merged over it, which
// the document listed without a word (found by the contract audit); a client sending both could
// not know which wins.
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const Body = v.object({ properties: v.record(v.string(), v.looseObject({ description: v.optional(v.string()) })) });
const OpenApi = v.object({
  paths: v.record(v.string(), v.record(v.string(), v.looseObject({ requestBody: v.optional(v.object({ required: v.boolean(), content: v.object({ 'application/json': v.object({ schema: Body }) }) })) }))),
});

it("describes each field of a start's body, and execute's payload is merged over its workload as said", async () => {
  const doc = v.parse(OpenApi, t.app.swagger());
  const fields = (path: string) => doc.paths[path].post.requestBody?.content['application/json'].schema.properties ?? {};
  const undescribed = ['/api/run/playbook', '/api/execute'].flatMap((path) =>
    Object.entries(fields(path)).flatMap(([name, f]) => (f.description ? [] : [`${path} ${name}`])),
  );
  expect(undescribed).toEqual([]);
  expect(fields('/api/execute').payload.description).toMatch(/merged over `workload`/);

  const content = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: n, path: fields/one }\nworkload: { a: 0, b: 0, c: 0 }\nworkflow:\n  - step: start\n    wait: { signal: go }\n';
  expect((await t.app.inject({ method: 'POST', url: '/api/catalog/playbook', payload: { content } })).statusCode).toBe(201);
  const started = await t.app.inject({ method: 'POST', url: '/api/execute', payload: { path: 'fields/one', workload: { a: 1, b: 1 }, payload: { b: 2 } } });
  expect(started.statusCode, started.body).toBe(200);
  const events = (await t.app.inject({ method: 'GET', url: `/api/events/${started.json().execution_id}?limit=1` })).json();
  expect(events.events[0].context.input.workload).toEqual({ a: 1, b: 2, c: 0 });
});
