// GET /api/executions/{id}/steps/{step} of a step whose `playbook` task's child ran gave its run
// `tasks: []` and `error: null`: a child cancelled by hand ('wrong input') or failed ended the run
// `cancelled` or `failed` with nothing saying why, though the route's error is 'in its attempts'
// (only a child that never started had one). Each child run now has its task's attempt: the
// attempt number the task was at, its status, the child's error and the task's data
// {execution_id, status, result}.
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
const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);

it("a child run holds its task's attempt: the child's error, or its result", async () => {
  const api = executionApi(s.url);
  await api.register(`
apiVersion: svc/v1
metadata: { name: kid, path: child_attempts/kid }
workflow:
  - step: k
    wait: { signal: go }
`);
  await api.register(`
apiVersion: svc/v1
metadata: { name: parent, path: child_attempts/parent }
workflow:
  - step: call
    tool: { name: c, kind: playbook, path: child_attempts/kid, retry: { attempts: 2, delay_seconds: 0 } }
`);
  const parent = await api.run('child_attempts/parent');
  const waitingChild = (n: number) => until(`child ${n} waits`, async () => {
    const kids = (await get(`/api/executions?parent=${parent}`)).executions as Json[];
    const kid = kids.length === n ? kids[0] : undefined;
    return kid && ((await get(`/api/executions/${kid.execution_id}`)).waits as Json[]).length === 1 && Number(kid.execution_id);
  }, 10_000);
  const first = await waitingChild(1);
  expect((await post(`/api/executions/${first}/cancel`, { reason: 'wrong input' })).status).toBe(200);
  const second = await waitingChild(2);
  expect((await post(`/api/executions/${second}/signals/go`, { payload: { n: 7 } })).status).toBe(202);
  expect(await api.wait(parent, 10_000)).toMatchObject({ status: 'completed' });

  const runs = (await get(`/api/executions/${parent}/steps/call`)).runs as Json[];
  expect(runs.map((r) => [r.child_execution_id, r.status])).toEqual([[first, 'cancelled'], [second, 'completed']]);
  expect(runs[0].tasks).toEqual([
    { task: 'c', kind: 'playbook', attempts: [expect.objectContaining({ attempt: 1, status: 'error', error: { code: 'cancelled', message: 'wrong input' }, output: { execution_id: first, status: 'cancelled', result: null } })] },
  ]);
  expect(runs[1].tasks).toEqual([
    { task: 'c', kind: 'playbook', attempts: [expect.objectContaining({ attempt: 2, status: 'ok', error: null, output: { execution_id: second, status: 'completed', result: { n: 7 } } })] },
  ]);
  const [a] = runs[0].tasks[0].attempts;
  expect(a.started_at).toBe(runs[0].started_at);
  expect(Date.parse(a.started_at) + a.duration_ms).toBe(Date.parse(runs[0].finished_at));
});
