// A `playbook` task's own timers (its timeout_seconds, its retry's delay) are told apart from a
// waiting step's wait in what clients read, on a real server, database and worker:
// GET /api/executions/{id} `waits` says what each task timer is for (a step's own wait says
// nothing new), and GET …/state reads a step whose child runs under a timeout as active (its
// child runs), one in its retry's delay as waiting for that retry.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: Server;
let base = '';

beforeAll(async () => {
  s = await startTestStack();
  // Always fails: each attempt of a child calling it fails (`/fail/<ms>`: after that many ms).
  target = createServer((req, res) => {
    setTimeout(() => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{}');
    }, Number(req.url?.split('/')[2] ?? 0) || 0);
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: sleeper, path: taskviews/sleeper }
workflow:
  - step: start
    wait: { for: 60s }
`);
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: failing, path: taskviews/failing }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "${base}/fail" }
`);
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: slow_failing, path: taskviews/slow_failing }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "${base}/fail/{{ args.ms }}" }
`);
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => target?.close(r));
});

const parent = (name: string, task: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: taskviews/${name} }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, ${task} }
`;

const detail = async (id: number) => (await http(s.url, 'GET', `/api/executions/${id}`)).body;
const state = async (id: number) => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;

/** Polls the execution's `waits` until `ready` holds of them (10 s at most). */
async function waitsWhen(id: number, ready: (waits: Json[]) => boolean): Promise<Json[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const waits = (await detail(id)).waits as Json[];
    if (ready(waits) || Date.now() > deadline) return waits;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function childOf(id: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const kids = (await http(s.url, 'GET', `/api/executions?parent=${id}`)).body.executions as Json[];
    if (kids.length || Date.now() > deadline) return Number(kids[0]?.execution_id);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a playbook task\'s timeout timer', () => {
  it('GET /api/executions/{id} names it (for: timeout, task, attempt); the child\'s own wait says nothing new; /state reads the step as active, not waiting', async () => {
    const reg = await s.register(parent('timeout', 'path: taskviews/sleeper, timeout_seconds: 60'));
    const id = await s.run(reg.path);
    const waits = await waitsWhen(id, (w) => w.length > 0);
    expect(waits).toEqual([{ step: 'start', seq: expect.any(Number), kind: 'timer', signal: null, wake_at: expect.any(String), approval_roles: null, since: expect.any(String), for: 'timeout', task: 'kid', attempt: 1 }]);

    // The child's step waits for its own timer: the entry has the fields it always had, no more.
    const child = await childOf(id);
    const childWaits = await waitsWhen(child, (w) => w.length > 0);
    expect(childWaits).toEqual([{ step: 'start', seq: expect.any(Number), kind: 'timer', signal: null, wake_at: expect.any(String), approval_roles: null, since: expect.any(String) }]);
    const childState = await state(child);
    expect(childState.steps.start).toMatchObject({ status: 'waiting', wait: { kind: 'timer', wake_at: expect.any(String) } });
    expect(childState.steps.start.wait).not.toHaveProperty('for');

    // The parent's step runs its child: active, with no wait of its own.
    const st = await state(id);
    expect(st.steps.start.status).toBe('active');
    expect(st.steps.start).not.toHaveProperty('wait');
    expect(st.active_steps).toEqual(['start']);
    await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done looking' });
  });
});

describe('a playbook task\'s retry delay', () => {
  it('GET /api/executions/{id} names it (for: retry, the next attempt); /state reads the step as waiting for that retry, with its wake-up time', async () => {
    const reg = await s.register(parent('retry', 'path: taskviews/failing, retry: { attempts: 3, delay_seconds: 60 }'));
    const id = await s.run(reg.path);
    const waits = await waitsWhen(id, (w) => w.length > 0);
    expect(waits).toEqual([{ step: 'start', seq: expect.any(Number), kind: 'timer', signal: null, wake_at: expect.any(String), approval_roles: null, since: expect.any(String), for: 'retry', task: 'kid', attempt: 2 }]);

    const st = await state(id);
    expect(st.steps.start).toEqual({ status: 'waiting', wait: { kind: 'timer', signal: null, approval_roles: null, wake_at: waits[0].wake_at, since: waits[0].since, for: 'retry', task: 'kid', attempt: 2 } });
    expect(st.active_steps).toEqual(['start']);
    expect(st.pending_commands).toBe(0);
    // The inspection's last snapshot reads it the same (its context: the steps as /state has them).
    const inspected = (await http(s.url, 'GET', `/api/executions/${id}/inspect`)).body.events as Json[];
    expect(inspected.filter((e) => e.type === '@xstate.snapshot').at(-1)?.snapshot.context.start).toEqual({ status: 'waiting', wait: { kind: 'timer', signal: null, approval_roles: null, for: 'retry', task: 'kid', attempt: 2 } });
    await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done looking' });
  });
});

describe('a looped playbook task whose items wait for their retries', () => {
  it("/state gives the wake-up time of the wait it describes: the first (lowest seq) of the step's waits", async () => {
    const reg = await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: retries, path: taskviews/retries }
workflow:
  - step: start
    loop: { in: [0, 800], iterator: ms, mode: parallel }
    tool: { name: kid, kind: playbook, path: taskviews/slow_failing, args: { ms: "{{ ms }}" }, retry: { attempts: 3, delay_seconds: 60 } }
`);
    const id = await s.run(reg.path);
    // Item 0's child fails at once, item 1's 800 ms later: two retry delays, ending apart.
    const waits = (await waitsWhen(id, (w) => w.length === 2)).sort((a, b) => Number(a.seq) - Number(b.seq));
    expect(waits.map((w) => w.for)).toEqual(['retry', 'retry']);
    expect(Date.parse(String(waits[1].wake_at)) - Date.parse(String(waits[0].wake_at))).toBeGreaterThan(400);
    const st = await state(id);
    expect(st.steps.start).toMatchObject({ status: 'waiting', wait: { kind: 'timer', for: 'retry', task: 'kid', attempt: 2, wake_at: waits[0].wake_at } });
    await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done looking' });
  });
});
