// A task's `limit` of concurrency 1 means one call in flight at most, also across a cancel. A
// cancelled execution's command that a worker runs goes on until the worker hears of the cancel
// (its next heartbeat, ~2 s): its slot stays taken until the worker reports the command's end, or
// its lease expires (a worker SIGKILLed never reports). Before, the cancel gave the slot back at
// once and the next execution's call ran beside the cancelled one for ~1.7 s. The same for a
// playbook's `concurrency`: the next queued execution was admitted 0.14 s after the cancel, while
// the cancelled one's call still ran. A paused execution's running task keeps its slot too. Real server and database, real worker processes,
// a real HTTP server on port 0 counting the calls in flight.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

// A killed worker's lease ends 6 s after its last heartbeat (sweeps are nudged by the test).
const STALE_SECONDS = 6;
let t: TestApp;
let target: HttpTarget;
const workers: WorkerProcess[] = [];
let inFlight = 0;
let maxInFlight = 0;
/** Calls held open until the test lets them go (or the caller goes away), by their `n`. */
const held = new Map<string, ServerResponse>();
/** When each call first came (ms since the epoch), by its `n`. */
const firstSeen = new Map<string, number>();

beforeAll(async () => {
  t = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(STALE_SECONDS) });
  // A call to /hold stays open until the test answers it or its caller goes away.
  target = await startHttpTarget(async (_req, res, recorded) => {
    if (recorded.path !== '/hold') return;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    held.set(String(recorded.query.n), res);
    if (!firstSeen.has(String(recorded.query.n))) firstSeen.set(String(recorded.query.n), Date.now());
    await new Promise((resolve) => res.on('close', resolve));
    inFlight--;
    held.delete(String(recorded.query.n));
  });
  expect((await http(t.url, 'PUT', '/api/limits/one-call', { concurrency: 1 })).status).toBe(200);
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: held, path: flow/held-call }
workload: { n: "0" }
workflow:
  - step: call
    tool: { name: call, kind: http, url: "${target.url}/hold?n={{ workload.n }}", timeout_seconds: 60, limit: { name: one-call } }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  // The same call, limited by its playbook's concurrency instead (a slot per execution).
  expect((await http(t.url, 'PUT', '/api/limits/one-run', { concurrency: 1 })).status).toBe(200);
  const q = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: held-run, path: flow/held-run }
workload: { n: "0" }
concurrency: { limit: one-run }
workflow:
  - step: call
    tool: { name: call, kind: http, url: "${target.url}/hold?n={{ workload.n }}", timeout_seconds: 60 }
`,
  });
  expect(q.status, JSON.stringify(q.body)).toBe(201);
  workers.push(await startWorkerProcess(t.url, { concurrency: 4, env: { SVC_WORKER_TOKEN: t.workerToken } }));
}, 60_000);

afterAll(async () => {
  for (const w of workers) await w.kill();
  for (const res of held.values()) res.destroy();
  await target?.close();
  await t?.close();
});

const start = async (n: string): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/held-call', payload: { n } })).body.execution_id as number;
const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
const running = async (): Promise<number> => (await http(t.url, 'GET', '/api/limits/one-call')).body.running;
const answer = (n: string) => {
  const res = held.get(n);
  res?.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
};
const sweep = async () => expect((await http(t.url, 'POST', '/api/admin/command_reaper/sweep')).status).toBe(200);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a task limit of concurrency 1', () => {
  it("keeps a cancelled command's slot until its worker reports the command's end", async () => {
    maxInFlight = 0;
    const a = await start('a1');
    await until('the first call is in flight', () => held.has('a1'));
    const b = await start('b1');
    const cancel = await http(t.url, 'POST', `/api/executions/${a}/cancel`, { reason: 'test' });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    // The cancel ends the execution at once, as before.
    expect(await statusOf(a)).toBe('cancelled');
    await until("the second call is in flight (after the worker stopped the first)", () => held.has('b1'), 20_000);
    expect(maxInFlight, 'calls in flight at once on a limit of 1').toBe(1);
    answer('b1');
    await until('the second execution completed', async () => (await statusOf(b)) === 'completed');
    await until('the slot is given back', async () => (await running()) === 0);
  });

  it("keeps a cancelled execution's concurrency slot until its worker reports its command's end", async () => {
    maxInFlight = 0;
    const a = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/held-run', payload: { n: 'a4' } })).body.execution_id as number;
    await until('the first call is in flight', () => held.has('a4'));
    const b = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/held-run', payload: { n: 'b4' } })).body.execution_id as number;
    expect(await statusOf(b)).toBe('queued');
    expect((await http(t.url, 'POST', `/api/executions/${a}/cancel`, { reason: 'test' })).status).toBe(200);
    expect(await statusOf(a)).toBe('cancelled');
    await until('the second call is in flight (after the worker stopped the first)', () => held.has('b4'), 20_000);
    expect(maxInFlight, 'calls in flight at once on a concurrency of 1').toBe(1);
    answer('b4');
    await until('the second execution completed', async () => (await statusOf(b)) === 'completed');
    await until('the slot is given back', async () => (await http(t.url, 'GET', '/api/limits/one-run')).body.running === 0);
  });

  it("keeps a paused execution's running task's slot", async () => {
    maxInFlight = 0;
    const a = await start('a2');
    await until('the first call is in flight', () => held.has('a2'));
    const paused = await http(t.url, 'POST', `/api/executions/${a}/pause`, {});
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    const b = await start('b2');
    await sleep(2_500);
    expect(held.has('b2'), 'a call of the second execution while the paused one runs').toBe(false);
    expect(await running()).toBe(1);
    answer('a2');
    await until('the second call is in flight', () => held.has('b2'));
    expect(maxInFlight).toBe(1);
    answer('b2');
    // Its one step done, the paused execution ends too.
    await until('both completed', async () => (await statusOf(a)) === 'completed' && (await statusOf(b)) === 'completed');
    await until('the slot is given back', async () => (await running()) === 0);
  });

  it("gives a SIGKILLed worker's cancelled command's slot back when its lease expires, not before", async () => {
    const a = await start('a3');
    await until('the first call is in flight', () => held.has('a3'));
    await workers.shift()!.kill();
    const killedAt = Date.now();
    await until('the killed call closed', () => !held.has('a3'));
    expect((await http(t.url, 'POST', `/api/executions/${a}/cancel`, { reason: 'test' })).status).toBe(200);
    const b = await start('b3');
    // Within the lease (the killed pool beat at most 2 s before it died): a sweep keeps the slot.
    await sweep();
    expect(await running()).toBe(1);
    workers.push(await startWorkerProcess(t.url, { concurrency: 4, env: { SVC_WORKER_TOKEN: t.workerToken } }));
    // Past it: a sweep gives the slot back and the second call runs.
    await sleep(Math.max(0, killedAt + (STALE_SECONDS + 1) * 1000 - Date.now()));
    await sweep();
    await until('the second call is in flight', () => held.has('b3'), 10_000);
    expect(firstSeen.get('b3')! - killedAt, 'ms from the kill to the second call').toBeGreaterThanOrEqual((STALE_SECONDS - 2) * 1000);
    answer('b3');
    await until('the second execution completed', async () => (await statusOf(b)) === 'completed');
    await until('the slot is given back', async () => (await running()) === 0);
  });
});
