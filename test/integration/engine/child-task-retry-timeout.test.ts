// A `playbook` task honours `timeout_seconds` and `retry` (DESIGN.md "Playbook DSL v1": fields
// common to every kind), on a real server, database and worker: the server bounds the child with
// a durable timer and cancels it when the time runs out (code `timeout`), and starts a new child
// after the worker's retry delay when one fails and attempts remain (`retry.when` deciding).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: Server;
let base = '';
// Calls per key; a key fails (503) its first `fail` calls.
const calls = new Map<string, number>();

beforeAll(async () => {
  s = await startTestStack();
  target = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const key = u.searchParams.get('key') ?? '';
    const n = (calls.get(key) ?? 0) + 1;
    calls.set(key, n);
    res.writeHead(n <= Number(u.searchParams.get('fail') ?? 0) ? 503 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ calls: n }));
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: sleeper, path: childtask/sleeper }
workflow:
  - step: start
    wait: { for: 30s }
`);
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: quick, path: childtask/quick }
workflow:
  - step: start
    tool: { name: q, kind: noop }
`);
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: flaky, path: childtask/flaky }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "${base}/flaky?key={{ args.key }}&fail={{ args.fail }}" }
`);
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => target?.close(r));
});

const parent = (name: string, task: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: childtask/${name} }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, ${task} }
`;

async function children(id: number): Promise<Json[]> {
  const r = await http(s.url, 'GET', `/api/executions?parent=${id}`);
  return (r.body.executions as Json[]).sort((a, b) => Number(a.execution_id) - Number(b.execution_id));
}

async function waitsOf(id: number): Promise<Json[]> {
  return (await http(s.url, 'GET', `/api/executions/${id}`)).body.waits as Json[];
}

describe('timeout_seconds on a playbook task', () => {
  it('cancels a child that outlives it: the step fails with code timeout, the child ends cancelled naming the timeout', async () => {
    const reg = await s.register(parent('timeout', 'path: childtask/sleeper, timeout_seconds: 1'));
    expect(reg.warnings ?? []).toEqual([]);
    const id = await s.run(reg.path);
    const done = await s.wait(id, 15_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'timeout', step: 'start', message: expect.stringContaining('timeout_seconds') });
    const kids = await children(id);
    expect(kids).toHaveLength(1);
    const child = await s.wait(Number(kids[0].execution_id), 10_000);
    expect(child.status).toBe('cancelled');
    const cancelled = (await s.events(Number(kids[0].execution_id))).find((e) => e.event_type === 'execution.cancelled');
    expect(cancelled?.context.reason).toMatch(/timeout_seconds.*cancelled by parent execution/);
    const ev = await s.events(id);
    expect(ev.filter((e) => e.event_type === 'timer.set').map((e) => e.context)).toEqual([expect.objectContaining({ task: 'kid', for: 'timeout', attempt: 1 })]);
    expect(ev.some((e) => e.event_type === 'timer.fired')).toBe(true);
    expect(await waitsOf(id)).toEqual([]);
  });

  it('a templated timeout_seconds that renders to no number > 0 fails the task (invalid_task), starting no child', async () => {
    const reg = await s.register(parent('timeout-bad', 'path: childtask/quick, timeout_seconds: "{{ workload.t }}"'));
    const id = await s.run(reg.path, { t: 'soon' });
    const done = await s.wait(id);
    expect(done.error).toMatchObject({ code: 'invalid_task', message: 'invalid playbook task: timeout_seconds: expected a number > 0' });
    expect(await children(id)).toEqual([]);
  });

  it('a child ending in time ends its timer: the step is ok, no wait is left, no timer fires', async () => {
    const reg = await s.register(parent('in-time', 'path: childtask/quick, timeout_seconds: "{{ workload.t }}"'));
    const id = await s.run(reg.path, { t: 2 });
    const done = await s.wait(id);
    expect(done).toMatchObject({ status: 'completed', result: { status: 'completed' } });
    expect(await waitsOf(id)).toEqual([]);
    await new Promise((r) => setTimeout(r, 2500));
    const ev = await s.events(id);
    expect(ev.some((e) => e.event_type === 'timer.set')).toBe(true);
    expect(ev.some((e) => e.event_type === 'timer.fired')).toBe(false);
  });
});

describe('retry on a playbook task', () => {
  it('starts a new child after each failure until one completes (three children), after the delay', async () => {
    const reg = await s.register(parent('retry', 'path: childtask/flaky, args: { key: "r{{ execution.id }}", fail: 2 }, retry: { attempts: 3, delay_seconds: 0.2 }'));
    const id = await s.run(reg.path);
    const done = await s.wait(id, 20_000);
    expect(done).toMatchObject({ status: 'completed', result: { status: 'completed' } });
    const kids = await children(id);
    expect(kids.map((k) => k.status)).toEqual(['failed', 'failed', 'completed']);
    expect(calls.get(`r${id}`)).toBe(3);
    const ev = await s.events(id);
    expect(ev.filter((e) => e.event_type === 'child.started').map((e) => e.context.attempt ?? 1)).toEqual([1, 2, 3]);
    expect(ev.filter((e) => e.event_type === 'timer.set').map((e) => [e.context.for, e.context.attempt])).toEqual([['retry', 2], ['retry', 3]]);
    expect(await waitsOf(id)).toEqual([]);
  });

  it('gives up when the attempts are spent: the task carries the last child\'s failure', async () => {
    const reg = await s.register(parent('retry-spent', 'path: childtask/flaky, args: { key: "s{{ execution.id }}", fail: 5 }, retry: { attempts: 2, delay_seconds: 0.1 }'));
    const id = await s.run(reg.path);
    const done = await s.wait(id, 20_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'http_status', step: 'start' });
    expect((await children(id)).map((k) => k.status)).toEqual(['failed', 'failed']);
  });

  it('does not retry when retry.when is false for the failed outcome', async () => {
    const reg = await s.register(parent('retry-when', 'path: childtask/flaky, args: { key: "w{{ execution.id }}", fail: 2 }, retry: { attempts: 3, delay_seconds: 0.1, when: "{{ outcome.error.code == \'timeout\' }}" }'));
    const id = await s.run(reg.path);
    const done = await s.wait(id, 20_000);
    expect(done.status).toBe('failed');
    expect(await children(id)).toHaveLength(1);
    expect(calls.get(`w${id}`)).toBe(1);
  });

  it('retries a child that timed out, each attempt bounded anew', async () => {
    const reg = await s.register(parent('retry-timeout', 'path: childtask/sleeper, timeout_seconds: 0.5, retry: { attempts: 2, delay_seconds: 0.1, when: "{{ outcome.error.code == \'timeout\' }}" }'));
    const id = await s.run(reg.path);
    const done = await s.wait(id, 20_000);
    expect(done.error).toMatchObject({ code: 'timeout' });
    const kids = await children(id);
    expect(kids).toHaveLength(2);
    for (const k of kids) expect((await s.wait(Number(k.execution_id), 10_000)).status).toBe('cancelled');
  });

  it('cancelling the parent during a retry delay ends its timer: no new child starts', async () => {
    const reg = await s.register(parent('retry-cancel', 'path: childtask/flaky, args: { key: "c{{ execution.id }}", fail: 5 }, retry: { attempts: 3, delay_seconds: 3 }'));
    const id = await s.run(reg.path);
    let waits: Json[] = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !(waits = await waitsOf(id)).length) await new Promise((r) => setTimeout(r, 50));
    expect(waits).toHaveLength(1);
    const c = await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'stop' });
    expect(c.body).toMatchObject({ status: 'cancelled' });
    expect(await waitsOf(id)).toEqual([]);
    await new Promise((r) => setTimeout(r, 3500));
    expect(await children(id)).toHaveLength(1);
  });
});
