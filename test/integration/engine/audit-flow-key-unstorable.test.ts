// A limit's or debounce's key rendered by a template to text PostgreSQL cannot store (`b64decode`
// making NUL, `fromjson` a lone surrogate; no payload may carry them) failed the write: the start
// answered 500, and a task's key at a later step failed the worker's report. Now such a key is
// refused as one over 500 characters is: 422 limit_key naming the field, or the task fails with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let t: TestApp;
let worker: WorkerProcess | undefined;
// "a\0b" in base64; a JSON string of a lone surrogate (the payload holds only its escape's text).
const NUL_B64 = 'YQBi';
const SURROGATE_JSON = '"\\ud800"';

beforeAll(async () => {
  t = await startTestApp();
  expect((await http(t.url, 'PUT', '/api/limits/tenant', { concurrency: 5 })).status).toBe(200);
  for (const [path, flow, task] of [
    ['flow/nul-concurrency', 'concurrency: { limit: tenant, key: "{{ workload.k | b64decode }}" }', ''],
    ['flow/surrogate-concurrency', 'concurrency: { limit: tenant, key: "{{ workload.k | fromjson }}" }', ''],
    ['flow/nul-debounce', 'debounce: { key: "{{ workload.k | b64decode }}", seconds: 1 }', ''],
    ['flow/nul-task', '', ', limit: { name: tenant, key: "{{ workload.k | b64decode }}" }'],
  ] as const) {
    const r = await http(t.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: k, path: ${path} }
workload: { k: "" }
${flow}
workflow:
  - step: start
    tool: { name: first, kind: noop }
    next: limited
  - step: limited
    tool: { name: t, kind: noop${task} }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  worker = await startWorkerProcess(t.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: t.workerToken } });
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await t?.close();
});

const started = async (path: string): Promise<number> => (await http(t.url, 'GET', `/api/executions?path=${encodeURIComponent(path)}`)).body.executions.length;

describe('a key a template renders to text that cannot be stored', () => {
  it.each([
    ['flow/nul-concurrency', NUL_B64, 'concurrency.key', 'NUL'],
    ['flow/surrogate-concurrency', SURROGATE_JSON, 'concurrency.key', 'lone surrogate'],
    ['flow/nul-debounce', NUL_B64, 'debounce.key', 'NUL'],
  ])('%s: the start is 422 limit_key naming the field; nothing starts', async (path, k, field, what) => {
    const r = await http(t.url, 'POST', '/api/run/playbook', { path, payload: { k } });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.detail.code).toBe('limit_key');
    expect(r.body.detail.errors).toEqual([expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}: .*${what}`))]);
    expect(await started(path)).toBe(0);
  });

  it("a task's key: the task fails with limit_key and its execution ends, the worker's report taken", async () => {
    const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/nul-task', payload: { k: NUL_B64 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const view = await until('the execution ends', async () => {
      const v = (await http(t.url, 'GET', `/api/executions/${r.body.execution_id}`)).body;
      return ['completed', 'failed', 'cancelled'].includes(v.status) ? v : undefined;
    }, 30_000, 200);
    expect(view.status).toBe('failed');
    expect(JSON.stringify(view.error)).toContain('limit_key');
  });
});
