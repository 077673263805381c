// A paused execution's command that waits for room on a task's `limit` (withdrawn: PAUSED) was no
// work on its key: DELETE /api/limits answered 200 and the idle-key sweep forgot the key, so at the
// resume the command was PENDING on a key with no row, which no claim reads (it joins the key):
// stranded for ever, even once the limit was set again. Real server, database and worker process.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';
import { sweepFlowKeys } from '../../../src/periodic/flow-key-sweep.ts';

let t: TestApp;
let target: HttpTarget;
let worker: WorkerProcess | undefined;
/** Calls held open until the test answers them, by their `n`. */
const held = new Map<string, ServerResponse>();

beforeAll(async () => {
  t = await startTestApp();
  target = await startHttpTarget(async (_req, res, recorded) => {
    if (recorded.path !== '/hold') return;
    held.set(String(recorded.query.n), res);
    await new Promise((resolve) => res.on('close', resolve));
    held.delete(String(recorded.query.n));
  });
  for (const name of ['gate', 'swept']) {
    expect((await http(t.url, 'PUT', `/api/limits/${name}`, { concurrency: 1 })).status).toBe(200);
    const r = await http(t.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: ${name}, path: flow/${name} }
workload: { n: "0" }
workflow:
  - step: call
    tool: { name: call, kind: http, url: "${target.url}/hold?n={{ workload.n }}", timeout_seconds: 60, limit: { name: ${name}, key: acme } }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  worker = await startWorkerProcess(t.url, { concurrency: 4, env: { SVC_WORKER_TOKEN: t.workerToken } });
}, 60_000);

afterAll(async () => {
  await worker?.kill();
  for (const res of held.values()) res.destroy();
  await target?.close();
  await t?.close();
});

const start = async (path: string, n: string): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path, payload: { n } })).body.execution_id as number;
const answer = (n: string) => held.get(n)?.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
const running = async (name: string): Promise<number> => (await http(t.url, 'GET', `/api/limits/${name}`)).body.running;

/** Starts a holder of the key and a second execution whose command waits for room, then pauses the second. */
async function pausedWaiter(name: string, holder: string, waiter: string): Promise<number> {
  await start(`flow/${name}`, holder);
  await until(`${holder}'s call is in flight`, () => held.has(holder));
  const id = await start(`flow/${name}`, waiter);
  await until(`${waiter}'s command waits for room`, async () => (await http(t.url, 'GET', `/api/executions/${id}`)).body.limit_waits?.length === 1);
  expect((await http(t.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
  answer(holder);
  await until(`${holder}'s slot is given back`, async () => (await running(name)) === 0);
  return id;
}

describe("a paused execution's command waiting on a task limit", () => {
  it('keeps its limit from being deleted, and runs after the resume', async () => {
    const id = await pausedWaiter('gate', 'h1', 'a1');
    const del = await http(t.url, 'DELETE', '/api/limits/gate');
    expect(del.status, JSON.stringify(del.body)).toBe(409);
    expect(del.body.detail.code).toBe('limit_in_use');
    expect((await http(t.url, 'GET', '/api/limits/gate')).body).toMatchObject({ defined: true, concurrency: 1 });
    expect((await http(t.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    await until("the resumed execution's call is in flight", () => held.has('a1'), 20_000);
    answer('a1');
    await until('the resumed execution completed', async () => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status === 'completed', 20_000);
  });

  it('keeps its key from the idle-key sweep, and runs after the resume', async () => {
    const id = await pausedWaiter('swept', 'h2', 'a2');
    // A sweep that takes every key as idle (the day it waits for is past).
    await sweepFlowKeys({ db: t.deps.db, log: t.deps.log }, 0);
    expect((await http(t.url, 'GET', '/api/limits/swept')).body.key_list).toEqual([expect.objectContaining({ key: 'acme' })]);
    expect((await http(t.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    await until("the resumed execution's call is in flight", () => held.has('a2'), 20_000);
    answer('a2');
    await until('the resumed execution completed', async () => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status === 'completed', 20_000);
  });
});
