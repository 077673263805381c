// An mcp task whose endpoint renders empty ("" from the workload, as a form or a CLI sends a field
// left blank) uses its `server`, as one that renders null does: the worker's check for "neither
// server nor endpoint" already took "" as absent, but the server was resolved only for an endpoint
// of undefined or null, so `server: demo, endpoint: ""` failed `endpoint: expected an http or https
// URL`. A literal `endpoint: ""` stays refused at registration, naming the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
let mcp: TestMcpServer;

const agent = (path: string, endpoint: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.split('/').at(-1)}, path: ${path}, agent: true }
workload: { server: null, endpoint: null }
workflow:
  - step: start
    tool:
      - name: call
        kind: mcp
        server: "{{ workload.server }}"
        endpoint: ${endpoint}
        method: tools/call
        tool: add
        arguments: { a: 1, b: 2 }
`;

beforeAll(async () => {
  [stack, mcp] = await Promise.all([startWorkerStack(), startMcpServer()]);
  const server = await http(stack.url, 'POST', '/api/catalog/register', { resource_type: 'mcp', content: `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: blank }\nendpoint: ${mcp.url}\n` });
  if (server.status !== 201) throw new Error(`register mcp: ${server.status} ${JSON.stringify(server.body)}`);
  const r = await http(stack.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content: agent('agents/blank', '"{{ workload.endpoint }}"') });
  if (r.status !== 201) throw new Error(`register agent: ${r.status} ${JSON.stringify(r.body)}`);
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await mcp?.close();
});

describe('an mcp task with a server and an empty endpoint', () => {
  it('rendered "": calls the registered server, as a null endpoint does', async () => {
    for (const endpoint of ['', null]) {
      const r = await http(stack.url, 'POST', '/api/execute', { path: 'agents/blank', resource_kind: 'agent', workload: { server: 'blank', endpoint } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const done = await stack.wait(r.body.execution_id, 30_000);
      expect(done, JSON.stringify(endpoint)).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 3 } } });
    }
  });

  it('rendered "" with no server either: neither is given, named as such', async () => {
    const r = await http(stack.url, 'POST', '/api/execute', { path: 'agents/blank', resource_kind: 'agent', workload: { server: '', endpoint: '' } });
    const done = await stack.wait(r.body.execution_id, 30_000);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'invalid_task', message: expect.stringContaining('server or endpoint: one is required') } });
  });

  it('a literal empty endpoint is refused at registration, naming the field', async () => {
    const r = await http(stack.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content: agent('agents/blank-literal', '""') });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.detail.errors)).toContain('workflow[0].tool[0].endpoint');
  });
});
