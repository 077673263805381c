// Two steps wait for one signal name, the one waiting longest for admins only, the other for
// operators (DESIGN.md "Waiting and control": 403 when the step's approval roles exclude the
// caller). An operator's signal goes to the step that admits them; before, it was aimed at the
// step waiting longest and refused 403, though another waiting step would have taken it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
let operator: Record<string, string>;
let admin: Record<string, string>;
beforeAll(async () => {
  s = await startTestApp({ SVC_AUTH: 'token' });
  operator = bearer(await createApiToken(s.deps.db, 'operator-1', 'operator'));
  admin = bearer(await createApiToken(s.deps.db, 'admin-1', 'admin'));
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, headers: Record<string, string>, body: unknown = {}) => http(s.url, 'POST', path, body, headers);
const get = (path: string) => http(s.url, 'GET', path, undefined, admin);

describe('a signal to an execution with several steps waiting for it', () => {
  it('goes to the longest-waiting step that admits the caller; 403 only when none does', async () => {
    const reg = await post('/api/catalog/playbook', admin, {
      content: `apiVersion: svc/v1
metadata: { name: admitting, path: waits/admitting }
workflow:
  - step: start
    next: { mode: inclusive, arcs: [ { step: admins }, { step: ops } ] }
  - step: admins
    wait: { signal: go, approval: { roles: [admin] } }
  - step: ops
    wait: { signal: go }
`,
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const started = await post('/api/run/playbook', operator, { path: 'waits/admitting' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = started.body.execution_id as number;
    const waits = await until(`execution ${id} waits twice`, async () => {
      const w = (await get(`/api/executions/${id}`)).body.waits as Json[] | undefined;
      return w?.length === 2 && w;
    }, 10_000);
    // The admins' step waits longest (the lower seq): the one a signal was aimed at first.
    expect(waits.map((w) => w.step)).toEqual(['admins', 'ops']);

    const byOperator = await post(`/api/executions/${id}/signals/go`, operator, { payload: 'op' });
    expect(byOperator.status, JSON.stringify(byOperator.body)).toBe(202);
    expect(byOperator.body).toMatchObject({ status: 'delivered', step: 'ops' });
    // Now only the admins' step waits: an operator is refused, naming its roles.
    const again = await post(`/api/executions/${id}/signals/go`, operator, { payload: 'op2' });
    expect(again.status).toBe(403);
    expect(again.body.detail).toMatchObject({ code: 'forbidden', message: expect.stringContaining('step admins') });
    const byAdmin = await post(`/api/executions/${id}/signals/go`, admin, { payload: 'adm' });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(202);
    expect(byAdmin.body).toMatchObject({ status: 'delivered', step: 'admins' });
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status !== 'running' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed' });
  });
});
