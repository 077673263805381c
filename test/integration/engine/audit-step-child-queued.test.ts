// A `playbook` task's child waiting on its playbook's `concurrency` read as `running` since its start
// in its parent's step view (GET /api/executions/{id}/steps/{step}), and once it ran its started_at
// stayed its start: the 1.2 s it waited in the queue was its run time. The run is now `queued` while
// it waits, and begins (started_at) when it was admitted, its start staying as issued_at.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const get = async (path: string): Promise<Json> => (await http(s.url, 'GET', path)).body;

it("a child queued on its playbook's concurrency is queued in its parent's step view, then runs from its admission", async () => {
  const api = executionApi(s.url);
  await api.register(`
apiVersion: svc/v1
metadata: { name: kid, path: child_queue/kid }
concurrency: { limit: 1 }
workflow:
  - step: k
    wait: { signal: go }
`);
  await api.register(`
apiVersion: svc/v1
metadata: { name: parent, path: child_queue/parent }
workflow:
  - step: call
    tool: { name: c, kind: playbook, path: child_queue/kid }
`);
  // Holds the one slot until signalled.
  const blocker = await api.run('child_queue/kid');
  await until(`execution ${blocker} waits`, async () => ((await get(`/api/executions/${blocker}`)).waits as Json[] | undefined)?.length === 1, 10_000);
  const parent = await api.run('child_queue/parent');
  const child = await until('the child queued', async () => {
    const kids = (await get(`/api/executions?parent=${parent}`)).executions as Json[];
    return kids[0]?.status === 'queued' ? Number(kids[0].execution_id) : undefined;
  }, 10_000);

  const [queued] = (await get(`/api/executions/${parent}/steps/call`)).runs as Json[];
  expect(queued).toMatchObject({ child_execution_id: child, status: 'queued', started_at: null });
  expect(queued.issued_at).not.toBeNull();

  await new Promise((r) => setTimeout(r, 1200));
  expect((await http(s.url, 'POST', `/api/executions/${blocker}/signals/go`, { payload: {} })).status).toBe(202);
  await until(`execution ${child} admitted`, async () => (await get(`/api/executions/${child}`)).status === 'running', 10_000);
  expect((await http(s.url, 'POST', `/api/executions/${child}/signals/go`, { payload: {} })).status).toBe(202);
  expect(await api.wait(parent, 10_000)).toMatchObject({ status: 'completed' });

  const [ran] = (await get(`/api/executions/${parent}/steps/call`)).runs as Json[];
  const events = await api.events(child);
  const admitted = events.find((e) => e.event_type === 'execution.admitted');
  expect(ran).toMatchObject({ status: 'completed', issued_at: queued.issued_at });
  expect(Date.parse(ran.started_at)).toBe(Date.parse(admitted.created_at));
  expect(Date.parse(ran.started_at) - Date.parse(ran.issued_at)).toBeGreaterThanOrEqual(1000);
  expect(Date.parse(ran.finished_at)).toBeGreaterThanOrEqual(Date.parse(ran.started_at));
});
