// What a pause does to an execution's children was said nowhere (a cancel's cascade was): a child
// a `playbook` task already started is not paused with its parent and runs on, as a claimed
// command finishes; its end is recorded, and the child the parent's next step starts waits for
// the resume. (A queued execution is paused in its place: test/integration/engine/pause-queued.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);
const children = async (id: number) => ((await get(`/api/executions?parent=${id}`)).body.executions as Json[]).map((e) => ({ id: Number(e.execution_id), status: String(e.status) })).sort((a, b) => a.id - b.id);
const waiting = (id: number) => until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length, 10_000);

async function register(yaml: string): Promise<void> {
  const r = await post('/api/catalog/playbook', { content: yaml });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

describe('pausing a parent', () => {
  it('leaves the child it started running; the next child starts at the resume', async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: kid, path: pausekids/kid }
workflow:
  - step: gate
    wait: { signal: go }
`);
    await register(`
apiVersion: svc/v1
metadata: { name: parent, path: pausekids/parent }
workflow:
  - step: one
    tool: { name: k, kind: playbook, path: pausekids/kid }
    next: two
  - step: two
    tool: { name: k, kind: playbook, path: pausekids/kid }
`);
    const parent = Number((await post('/api/run/playbook', { path: 'pausekids/parent' })).body.execution_id);
    const [first] = await until('the first child', async () => (await children(parent)).length === 1 && children(parent), 10_000);
    await waiting(first.id);
    expect((await post(`/api/executions/${parent}/pause`)).status).toBe(200);
    // Not paused with it: it takes its signal and ends; the parent's step one ends with it.
    expect((await get(`/api/executions/${first.id}`)).body.status).toBe('running');
    expect((await post(`/api/executions/${first.id}/signals/go`)).status).toBe(202);
    await until('step one ended', async () => (await get(`/api/executions/${parent}/state`)).body.steps.one.status === 'completed', 10_000);
    await new Promise((r) => setTimeout(r, 300));
    // Step two's child is held by the pause.
    expect(await children(parent)).toEqual([{ id: first.id, status: 'completed' }]);
    expect((await get(`/api/executions/${parent}`)).body.status).toBe('paused');
    expect((await post(`/api/executions/${parent}/resume`)).status).toBe(200);
    const kids = await until('the second child', async () => (await children(parent)).length === 2 && children(parent), 10_000);
    await waiting(kids[1].id);
    expect((await post(`/api/executions/${kids[1].id}/signals/go`)).status).toBe(202);
    await until('parent completed', async () => (await get(`/api/executions/${parent}`)).body.status === 'completed', 10_000);
  });
});
