// GET /api/executions?label=k:v, repeated, keeps the executions with all of them (operations.md).
// One key given twice with two values took the last one only: `label=tenant:acme&label=tenant:globex`
// listed globex's executions as if acme's label had not been asked for. No execution has two
// values for one label: the list refuses it (422 naming `label`) instead of answering other rows.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1\nmetadata: { name: done, path: labels/twice }\nworkflow:\n  - step: start\n` });
  expect(r.status).toBe(201);
});
afterAll(async () => t?.close());

it('one label key given with two values is refused, naming the field; the same value twice is one label', async () => {
  const ids: Record<string, number> = {};
  for (const tenant of ['acme', 'globex']) {
    const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'labels/twice', labels: { tenant } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids[tenant] = r.body.execution_id as number;
  }
  const r = await http(t.url, 'GET', '/api/executions?label=tenant:acme&label=tenant:globex');
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(JSON.stringify(r.body.detail)).toContain('label: names tenant twice');
  const same = await http(t.url, 'GET', '/api/executions?label=tenant:acme&label=tenant:acme');
  expect(same.status).toBe(200);
  expect((same.body.executions as Json[]).map((e) => e.execution_id)).toEqual([ids.acme]);
});
