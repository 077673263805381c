// POST /api/run/playbook takes a `version` to start; POST /api/execute starts the newest and took
// `version` as any field it does not know: {"path": "ev/one", "version": 1} with version 2
// registered answered 200 and started version 2, the client told nothing. It is refused 422
// naming the field, and nothing is started.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const playbook = (n: number) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: v${n}, path: ev/one }\nworkflow:\n  - step: start\n    wait: { signal: go }\n`;

it('refuses a version to POST /api/execute, which starts the newest, and starts nothing', async () => {
  for (const n of [1, 2]) expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook(n) })).status).toBe(201);
  const count = async () => Number((await t.deps.db.query<{ n: string }>('SELECT count(*) AS n FROM core.execution')).rows[0].n);
  const before = await count();

  const res = await http(t.url, 'POST', '/api/execute', { path: 'ev/one', version: 1 });
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail.errors).toEqual(['version: this route starts the newest version: POST /api/run/playbook starts the version asked']);
  expect(await count()).toBe(before);

  // The route that takes it starts the version asked.
  const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'ev/one', version: 1 });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  const first = await http(t.url, 'GET', '/api/catalog/playbook/ev/one?version=1');
  expect(run.body.catalog_id).toBe(first.body.catalog_id);
});
