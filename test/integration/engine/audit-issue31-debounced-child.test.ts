// A child started by a parent's `playbook` task, of a playbook with `debounce`, is its parent's
// own (as a retry or an auto-resume restart is its predecessor's): it neither opens a debounce
// window nor joins one (docs/flow-control.md, "Debounce"). It did both: a loop starting three such
// children in one unit wrote three windows of one key (unique violation: POST /api/run/playbook
// answered 500 and nothing started); a child started while an API start's window was open failed
// its unit the same way (the worker's report answered 500 again and again, the parent stalled
// until the window closed); and a child's open window was joined by a stranger's API start, whose
// payload the child then ran, its result handed to the parent.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http, type Json } from '../../helpers/http.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ concurrency: 8 });
  await s.register(`
apiVersion: svc/v1
metadata: { name: debounced, path: audit/issue31/debounced }
workload: { n: none }
debounce: { key: "k", seconds: 30 }
workflow:
  - step: start
    tool: { name: echo, kind: shell, command: "echo {{ workload.n }}" }
`);
}, 120_000);
afterAll(async () => s?.close());

const childrenOf = async (parent: number): Promise<number[]> =>
  (await s.events(parent)).filter((e) => e.event_type === 'child.started').map((e) => (e.context as { child_execution_id: number }).child_execution_id);

/** What a child echoed: its own result's stdout, or (a parent's) its child's. */
const echoed = (done: Json): string | undefined => {
  const r = done.result as { stdout?: string; result?: { stdout?: string } } | null;
  return (r?.stdout ?? r?.result?.stdout)?.trim();
};

it('a loop of children of a debounced playbook starts them all, each with its own args, and none waits for a window', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: loop, path: audit/issue31/loop }
workflow:
  - step: start
    loop: { in: "{{ [1, 2, 3] }}", iterator: i, mode: parallel }
    tool: { name: kid, kind: playbook, path: audit/issue31/debounced, args: { n: "{{ i }}" } }
`);
  const started = await http(s.url, 'POST', '/api/run/playbook', { path: 'audit/issue31/loop', payload: {} });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  // Well before the 30 s window would close.
  const done = await s.wait(started.body.execution_id, 15_000);
  expect(done.status, JSON.stringify(done)).toBe('completed');
  const kids = await childrenOf(started.body.execution_id);
  expect(new Set(kids).size).toBe(3);
  const ns = await Promise.all(kids.map(async (k) => echoed(await s.wait(k))));
  expect(ns.sort()).toEqual(['1', '2', '3']);
}, 60_000);

it("a child started while an API start's window is open runs at once with its own args; the window keeps its own execution", async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: parent, path: audit/issue31/parent }
workload: { n: mine }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: kid
  - step: kid
    tool: { name: kid, kind: playbook, path: audit/issue31/debounced, args: { n: "{{ workload.n }}" } }
`);
  const window = await http(s.url, 'POST', '/api/run/playbook', { path: 'audit/issue31/debounced', payload: { n: 'api' } });
  expect(window.status).toBe(200);
  const parent = await s.run('audit/issue31/parent');
  const done = await s.wait(parent, 15_000);
  expect(done.status, JSON.stringify(done)).toBe('completed');
  expect(echoed(done)).toBe('mine');
  const [kid] = await childrenOf(parent);
  expect(kid).not.toBe(window.body.execution_id);
  expect((await http(s.url, 'GET', `/api/executions/${window.body.execution_id}`)).body.status).toBe('queued');
  await http(s.url, 'POST', `/api/executions/${window.body.execution_id}/cancel`, {});
}, 60_000);

it("a stranger's API start never joins a child: it opens its own window, and the child runs its parent's args", async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: waiting_parent, path: audit/issue31/waiting_parent }
workload: { n: parents }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: audit/issue31/debounced, args: { n: "{{ workload.n }}" } }
`);
  const parent = await s.run('audit/issue31/waiting_parent');
  await expect.poll(async () => (await childrenOf(parent)).length, { timeout: 10_000 }).toBe(1);
  const [kid] = await childrenOf(parent);
  const stranger = await http(s.url, 'POST', '/api/run/playbook', { path: 'audit/issue31/debounced', payload: { n: 'stranger' } });
  expect(stranger.status).toBe(200);
  expect(stranger.body.execution_id).not.toBe(kid);
  expect(stranger.body.debounced).toBeUndefined();
  const done = await s.wait(parent, 15_000);
  expect(echoed(done)).toBe('parents');
  await http(s.url, 'POST', `/api/executions/${stranger.body.execution_id}/cancel`, {});
}, 60_000);
