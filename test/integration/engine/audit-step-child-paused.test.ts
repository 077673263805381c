// A `playbook` task's child paused by hand (a parent's pause does not cascade, nor does a child's
// reach its parent) read as `running` in its parent's step view (GET /api/executions/{id}/steps/
// {step}): nothing there said why the step did not move on. The run is now `paused` while the child
// is, `running` again once it is resumed, and its end's status after.
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

it("a child paused by hand is paused in its parent's step view, then running, then its end", async () => {
  const api = executionApi(s.url);
  await api.register(`
apiVersion: svc/v1
metadata: { name: kid, path: child_paused/kid }
workflow:
  - step: k
    wait: { signal: go }
`);
  await api.register(`
apiVersion: svc/v1
metadata: { name: parent, path: child_paused/parent }
workflow:
  - step: call
    tool: { name: c, kind: playbook, path: child_paused/kid }
`);
  const parent = await api.run('child_paused/parent');
  const child = await until('the child waits', async () => {
    const [kid] = (await get(`/api/executions?parent=${parent}`)).executions as Json[];
    return kid && ((await get(`/api/executions/${kid.execution_id}`)).waits as Json[]).length === 1 && Number(kid.execution_id);
  }, 10_000);
  const run = async () => ((await get(`/api/executions/${parent}/steps/call`)).runs as Json[])[0];
  expect(await run()).toMatchObject({ child_execution_id: child, status: 'running' });

  expect((await post(`/api/executions/${child}/pause`)).status).toBe(200);
  const paused = await run();
  expect(paused).toMatchObject({ child_execution_id: child, status: 'paused', finished_at: null });
  expect(paused.started_at).not.toBeNull();
  expect((await get(`/api/executions/${parent}`)).status).toBe('running');

  expect((await post(`/api/executions/${child}/resume`)).status).toBe(200);
  expect(await run()).toMatchObject({ status: 'running', started_at: paused.started_at });
  expect((await post(`/api/executions/${child}/signals/go`, { payload: {} })).status).toBe(202);
  expect(await api.wait(parent, 10_000)).toMatchObject({ status: 'completed' });
  expect(await run()).toMatchObject({ status: 'completed', started_at: paused.started_at });
});
