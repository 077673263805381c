// A limit's key is at most 500 characters, but the bound counted UTF-16 units: a key of 300 emoji
// (300 characters, `length` 600) was refused as "a key over 500 characters", a start with 422
// limit_key and a task failed. Characters are code points now. Real server and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  expect((await http(t.url, 'PUT', '/api/limits/tenant', { concurrency: 1 })).status).toBe(200);
  for (const content of [
    `apiVersion: svc/v1
metadata: { name: per-tenant, path: flow/per-tenant }
inputs: { tenant: { type: string, required: true } }
concurrency: { limit: tenant, key: "{{ workload.tenant }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`,
    `apiVersion: svc/v1
metadata: { name: task-tenant, path: flow/task-tenant }
inputs: { tenant: { type: string, required: true } }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: tenant, key: "{{ workload.tenant }}" } }
`,
  ]) {
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(async () => {
  await t?.close();
});

const emoji = (n: number) => '🙂'.repeat(n);

describe('a key of characters outside the BMP', () => {
  it("of 500 characters is a playbook's concurrency key; of 501 it is 422 limit_key", async () => {
    const ok = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/per-tenant', payload: { tenant: emoji(500) } });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(200);
    const view = await http(t.url, 'GET', `/api/executions/${ok.body.execution_id}`);
    expect(view.body.flow?.key).toBe(emoji(500));
    const over = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/per-tenant', payload: { tenant: emoji(501) } });
    expect(over.status).toBe(422);
    expect(over.body.detail.code).toBe('limit_key');
  });

  it("of 300 characters is a task limit's key: its command waits on it, the task does not fail", async () => {
    const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/task-tenant', payload: { tenant: emoji(300) } });
    expect(r.status).toBe(200);
    const id = r.body.execution_id as number;
    // No worker runs here: the command waits for a claim, on its key.
    const waits = await until('the command is issued', async () => {
      const v = (await http(t.url, 'GET', `/api/executions/${id}`)).body;
      expect(v.status, JSON.stringify(v.error ?? null)).not.toBe('failed');
      return v.limit_waits?.length ? v.limit_waits : undefined;
    });
    expect(waits).toEqual([expect.objectContaining({ limit: 'tenant', key: emoji(300) })]);
  });
});
