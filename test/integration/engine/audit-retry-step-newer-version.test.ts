// A retry runs the version of the playbook its execution ran, not the newest, while a `playbook`
// task starts the newest version of its child's path whenever it starts one. `from_step` naming a
// step only a newer version has was refused as if the playbook had none ('playbook p has no step
// patch'), though the catalog showed it there. The 422 now names the version the execution ran,
// and says the newest has the step; a retry's child is the child playbook's newest version.
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
const kid = (version: number) => `
apiVersion: svc/v1
metadata: { name: kid, path: retry_version/kid }
workflow:
  - step: v${version}
    wait: { signal: go }
`;
const parent = (patched: boolean) => `
apiVersion: svc/v1
metadata: { name: parent, path: retry_version/parent }
workflow:
  - step: call
    tool: { name: c, kind: playbook, path: retry_version/kid }
    next: ${patched ? 'patch' : 'fin'}
${patched ? '  - step: patch\n    wait: { for: 1ms }\n    next: fin\n' : ''}  - step: fin
    wait: { for: 1ms }
`;

it('names the version a retry runs when from_step is only in a newer one; the retry starts the newest child', async () => {
  const api = executionApi(s.url);
  const kid1 = (await api.register(kid(1))).catalog_id;
  const ran = (await api.register(parent(false))).catalog_id;
  const id = await api.run('retry_version/parent');
  const [child] = await until('the child', async () => ((await get(`/api/executions?parent=${id}`)).executions as Json[]).length === 1 && (await get(`/api/executions?parent=${id}`)).executions, 10_000);
  expect(child.catalog_id).toBe(kid1);
  expect((await post(`/api/executions/${child.execution_id}/cancel`, { reason: 'wrong version' })).status).toBe(200);
  expect(await api.wait(id, 10_000)).toMatchObject({ status: 'failed' });

  const kid2 = (await api.register(kid(2))).catalog_id;
  await api.register(parent(true));
  const refused = await post(`/api/executions/${id}/retry`, { from_step: 'patch' });
  expect(refused.status).toBe(422);
  expect(refused.body.detail).toEqual({
    code: 'unprocessable',
    message: `playbook retry_version/parent has no step patch in version 1, the version execution ${id} ran, which a retry runs again; version 2, the newest, has it: start that one to run it`,
    errors: ['from_step: not a step of retry_version/parent version 1 (its steps: call, fin)'],
  });

  // The retry runs version 1 again; its child is the kid's newest version.
  const retried = await post(`/api/executions/${id}/retry`, {});
  expect(retried.status).toBe(201);
  const again = retried.body.execution_id;
  expect((await get(`/api/executions/${again}`)).catalog_id).toBe(ran);
  const [newChild] = await until('the retry\'s child', async () => ((await get(`/api/executions?parent=${again}`)).executions as Json[]).length === 1 && (await get(`/api/executions?parent=${again}`)).executions, 10_000);
  expect(newChild.catalog_id).toBe(kid2);
  expect((await post(`/api/executions/${again}/cancel`)).status).toBe(200);
});
