// GET /api/agents?workspace= (the filter sent empty, as a form or a URL template leaves an unset
// one) lists every visible agent, as the other lists take an empty query value as not sent
// (src/api/empty-query-values.ts), not the agents of a workspace named ''.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;
const agent = (path: string, workspace: string) => `
apiVersion: svc/v1
kind: Playbook
metadata:
  name: ${path.split('/').at(-1)}
  path: ${path}
  agent: true
  terminal: { visible: true, workspace: ${workspace} }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

beforeAll(async () => {
  a = await startTestApp();
  for (const [path, workspace] of [['agents/one', 'research'], ['agents/two', 'ops']]) {
    const r = await http(a.url, 'POST', '/api/catalog/register', { content: agent(path, workspace), resource_type: 'agent' });
    if (r.status !== 201) throw new Error(`register ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  }
}, 60_000);
afterAll(async () => a?.close());

describe('GET /api/agents with an empty workspace', () => {
  it('lists every visible agent, as without the parameter', async () => {
    const all = await http(a.url, 'GET', '/api/agents');
    expect(all.body.items.map((i: { path: string }) => i.path).sort()).toEqual(['agents/one', 'agents/two']);
    const empty = await http(a.url, 'GET', '/api/agents?workspace=');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(all.body);
    expect((await http(a.url, 'GET', '/api/agents?workspace=ops')).body.items).toEqual([expect.objectContaining({ path: 'agents/two', workspace: 'ops' })]);
  });
});
