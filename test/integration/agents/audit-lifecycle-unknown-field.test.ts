// POST /api/mcp/mcp/{server}/lifecycle/{action} took a body field it does not have and dropped it:
// {"paylod": {"version": "2.0"}} started the deploy without the payload (202), so the action ran
// on its defaults. As a signal's body refuses `paylod`, the lifecycle body now refuses it (422
// naming it, with the field it is close to), and nothing starts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const register = async (body: Record<string, unknown>) => {
    const r = await http(t.url, 'POST', '/api/catalog/register', body);
    if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await register({ content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: deploy, path: lcf/deploy }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n' });
  await register({ resource_type: 'mcp', content: 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: lcf }\nendpoint: http://127.0.0.1:9/mcp\nlifecycle: { deploy: lcf/deploy }\n' });
}, 60_000);
afterAll(async () => t?.close());

const started = async () => (await http(t.url, 'GET', '/api/executions')).body.executions.length;

describe('a lifecycle action with a body field it does not have', () => {
  it('is refused naming the field, nothing started; payload, {} and no body still start it', async () => {
    const r = await http(t.url, 'POST', '/api/mcp/mcp/lcf/lifecycle/deploy', { paylod: { version: '2.0' } });
    expect(r.status).toBe(422);
    expect(r.body.detail.errors).toEqual(["paylod: unknown field (did you mean 'payload'?)"]);
    expect(await started()).toBe(0);
    for (const body of [{ payload: { version: '2.0' } }, {}, undefined]) {
      expect((await http(t.url, 'POST', '/api/mcp/mcp/lcf/lifecycle/deploy', body)).status).toBe(202);
    }
    expect(await started()).toBe(3);
  });
});
