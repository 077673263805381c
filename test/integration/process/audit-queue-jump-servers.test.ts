// "No room, or others already queued on the key: the execution starts queued" (docs/flow-control.md).
// With two servers, a start on one whose memory of the key's room was read before the other
// queued on it was admitted at its start the moment a slot came free, ahead of the execution
// queued earlier: the start's trigger (migrations/0028) checked the key's room, not its queue.
// Real `svc server` processes on one database, each with its admitter; no worker (the steps wait).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';

let bed: ServerProcesses;
let a: ServerProcess;
let b: ServerProcess;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
  [a, b] = await Promise.all([bed.server(), bed.server()]);
  expect((await http(a.base, 'PUT', '/api/limits/jump', { concurrency: 2 })).status).toBe(200);
  const reg = await http(a.base, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: jump, path: audit/jump }
inputs: { k: { type: string, required: true } }
concurrency: { limit: jump, key: "{{ workload.k }}" }
workflow:
  - step: hold
    wait: { signal: go }
`,
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
}, 90_000);
afterAll(async () => {
  await bed?.close();
});

const start = async (base: string, k: string): Promise<number> => {
  const r = await http(base, 'POST', '/api/run/playbook', { path: 'audit/jump', payload: { k } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id;
};
const statusOf = async (id: number): Promise<string> => (await http(a.base, 'GET', `/api/executions/${id}`)).body.status;
const eventTypes = async (id: number): Promise<string[]> => ((await http(a.base, 'GET', `/api/events/${id}?limit=50`)).body.events as { event_type: string }[]).map((e) => e.event_type);

it('a start on one server does not take a freed slot ahead of an execution the other server queued on the key', async () => {
  const jumped: string[] = [];
  for (let round = 0; round < 4; round++) {
    const k = `tenant-${round}`;
    // Server A learns the key has room (2) and takes one of it.
    const a0 = await start(a.base, k);
    // Server B fills the key and queues one more on it.
    const b0 = await start(b.base, k);
    const b1 = await start(b.base, k);
    expect([await statusOf(a0), await statusOf(b0), await statusOf(b1)]).toEqual(['running', 'running', 'queued']);
    // A slot comes free on A, and A starts another on the key at once.
    expect((await http(a.base, 'POST', `/api/executions/${a0}/cancel`, { reason: 'done' })).status).toBe(200);
    const a1 = await start(a.base, k);
    // The one queued first is admitted to the freed slot; the later start waits behind it.
    await expect.poll(() => statusOf(b1), { timeout: 8_000 }).toBe('running').catch(() => {});
    const [s1, sa1] = [await statusOf(b1), await statusOf(a1)];
    if (s1 !== 'running' || sa1 !== 'queued') jumped.push(`round ${round}: queued first ${s1}, started later ${sa1} (${(await eventTypes(a1)).join(', ')})`);
    for (const id of [b0, b1, a1]) await http(a.base, 'POST', `/api/executions/${id}/cancel`, { reason: 'round over' });
  }
  expect(jumped).toEqual([]);
}, 120_000);
