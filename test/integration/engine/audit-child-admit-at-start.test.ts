// A child started by a parent's `playbook` task, of a playbook with `concurrency`, is admitted at
// its start when its key has room, as a start through the API is (docs/flow-control.md, "Room at
// the start"). Its key's room was never read for it: it always started queued (execution.queued),
// the admitter admitted it a moment later (execution.admitted), and svc_flow_queued_total counted
// it, however much room its key had. Where the key is full the others still queue and are
// admitted in turn, each once, and the limit holds.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http, type Json } from '../../helpers/http.ts';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../../actors/key-rooms.ts';
import { startExecutions } from '../../../actors/start-execution.ts';
import { ServiceError } from '../../../src/errors.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ concurrency: 8 });
}, 120_000);
afterAll(async () => s?.close());

const FLOW_EVENTS = ['execution.queued', 'execution.admitted'];

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** The children a parent's log says it started. */
const childrenOf = async (parent: number): Promise<number[]> =>
  (await s.events(parent)).filter((e) => e.event_type === 'child.started').map((e) => (e.context as { child_execution_id: number }).child_execution_id);

it("admits a child at its start when its key has room: no execution.queued, no execution.admitted, nothing counted queued", async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: roomy, path: audit/child_room/roomy }
concurrency: { limit: 5, key: "x" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
  // Started by a later step: the child starts in the unit that routes the worker's report.
  await s.register(`
apiVersion: svc/v1
metadata: { name: parent, path: audit/child_room/parent }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: kid
  - step: kid
    tool: { name: kid, kind: playbook, path: audit/child_room/roomy }
`);
  const lacking = () => metric('svc_route_retries_total', '{reason="lacking"}');
  const before = await lacking();
  const id = await s.run('audit/child_room/parent');
  expect(await s.wait(id)).toMatchObject({ status: 'completed' });
  // Its key's room is read with its id: one fold redone, as for a child of no limit.
  expect(await lacking()).toBe(before + 1);
  const [child] = await childrenOf(id);
  const events = await s.events(child);
  const types = events.map((e) => e.event_type);
  expect(types.filter((t) => FLOW_EVENTS.includes(t))).toEqual([]);
  expect((events[0].context as { input: { admission: Json } }).input.admission).toEqual({ limit: '@audit/child_room/roomy', key: 'x', capacity: 5, debounce: null, admitted: true });
  expect(await metric('svc_flow_queued_total', '{limit="@audit/child_room/roomy",kind="execution"}')).toBe(0);
}, 60_000);

it('admits a child whose path is a template at its start too (its room read after its path), in the start of its parent', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: picker, path: audit/child_room/picker }
workload: { which: roomy }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: "audit/child_room/{{ workload.which }}" }
`);
  const id = await s.run('audit/child_room/picker');
  expect(await s.wait(id)).toMatchObject({ status: 'completed' });
  const [child] = await childrenOf(id);
  const events = await s.events(child);
  expect(events.map((e) => e.event_type).filter((t) => FLOW_EVENTS.includes(t))).toEqual([]);
  expect((events[0].context as { input: { admission: { admitted?: boolean } } }).input.admission.admitted).toBe(true);
}, 60_000);

it('queues the children a full key has no room for, admits each once in turn, and never runs two at once', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: solo, path: audit/child_room/solo }
concurrency: { limit: 1, key: "one" }
workflow:
  - step: start
    wait: { for: 1s }
`);
  await s.register(`
apiVersion: svc/v1
metadata: { name: fan, path: audit/child_room/fan }
workflow:
  - step: kids
    loop: { in: [1, 2, 3], iterator: n, mode: parallel }
    tool: { name: kid, kind: playbook, path: audit/child_room/solo }
`);
  const id = await s.run('audit/child_room/fan');
  expect(await s.wait(id, 30_000)).toMatchObject({ status: 'completed' });
  const children = await childrenOf(id);
  expect(children).toHaveLength(3);
  const spans: { from: number; to: number }[] = [];
  let atStart = 0;
  for (const child of children) {
    const events = await s.events(child);
    const types = events.map((e) => e.event_type);
    const admittedAtStart = (events[0].context as { input: { admission: { admitted?: boolean } } }).input.admission.admitted === true;
    const admitted = events.filter((e) => e.event_type === 'execution.admitted');
    // Admitted once: at its start, or queued and then admitted by the admitter.
    if (admittedAtStart) {
      atStart++;
      expect(types.filter((t) => FLOW_EVENTS.includes(t))).toEqual([]);
    } else {
      expect(types.filter((t) => FLOW_EVENTS.includes(t))).toEqual(['execution.queued', 'execution.admitted']);
    }
    const from = Date.parse(String((admittedAtStart ? events[0] : admitted[0]).created_at));
    const to = Date.parse(String(events.at(-1)!.created_at));
    spans.push({ from, to });
  }
  // The key had room for one: the first child took it at its start, the others waited for it.
  expect(atStart).toBe(1);
  spans.sort((a, b) => a.from - b.from);
  for (let i = 1; i < spans.length; i++) expect(spans[i].from).toBeGreaterThanOrEqual(spans[i - 1].to);
}, 60_000);

it("another server's stale memory of a child's key fails its write's guard: the key is read again and the child queues", async () => {
  expect((await http(s.url, 'PUT', '/api/limits/childsolo', { concurrency: 1 })).status).toBe(200);
  await s.register(`
apiVersion: svc/v1
metadata: { name: held, path: audit/child_room/held }
concurrency: { limit: childsolo, key: k }
workflow:
  - step: start
    wait: { for: 1h }
`);
  await s.register(`
apiVersion: svc/v1
metadata: { name: holder, path: audit/child_room/holder }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: audit/child_room/held }
`);
  // Server B reads the key's room (1) while it is free; then this server takes the slot.
  const b = { ...s.deps, snapshots: new HotSnapshots(), rooms: new KeyRooms(s.deps.db) };
  expect(await b.rooms.take(s.deps.db, [{ limit: 'childsolo', key: 'k', capacity: null }])).toEqual(new Map([['childsolo\u0000k', 1]]));
  const first = await s.run('audit/child_room/held');
  expect((await http(s.url, 'GET', `/api/executions/${first}`)).body.status).toBe('running');
  const [r] = await startExecutions(b, [{ path: 'audit/child_room/holder', payload: {} }]);
  if (r instanceof ServiceError) throw r;
  const [child] = await childrenOf(r.executionId);
  expect((await http(s.url, 'GET', `/api/executions/${child}`)).body.status).toBe('queued');
  expect((await s.events(child)).map((e) => e.event_type)).toEqual(['execution.started', 'execution.queued']);
  expect((await s.deps.db.query<{ running: number }>(`SELECT running FROM core.flow_key WHERE name = 'childsolo' AND key = 'k'`)).rows[0].running).toBe(1);
  for (const id of [first, r.executionId]) await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' });
}, 60_000);

it('starts a chain of children 31 deep, each of a playbook with concurrency, at once: each admitted at its start', async () => {
  // Each level's path is read a fold before its key's room (its playbook names the key): two
  // folds redone per level, which the unit's rounds for lacking reads must cover.
  const DEPTH = 32;
  for (let n = DEPTH; n >= 1; n--) {
    const step = n === DEPTH ? '  - step: start\n    tool: { name: t, kind: noop }\n' : `  - step: start\n    tool: { name: kid, kind: playbook, path: audit/child_room/chain/${n + 1} }\n`;
    await s.register(`apiVersion: svc/v1\nmetadata: { name: chain${n}, path: audit/child_room/chain/${n} }\nconcurrency: { limit: 3, key: "c${n}" }\nworkflow:\n${step}`);
  }
  const r = await http(s.url, 'POST', '/api/run/playbook', { path: 'audit/child_room/chain/1', payload: {} });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(await s.wait(r.body.execution_id)).toMatchObject({ status: 'completed', error: null });
  let id = r.body.execution_id as number;
  for (let n = 2; n <= DEPTH; n++) {
    [id] = await childrenOf(id);
    const events = await s.events(id);
    expect(events.map((e) => e.event_type).filter((t) => FLOW_EVENTS.includes(t))).toEqual([]);
  }
}, 60_000);
