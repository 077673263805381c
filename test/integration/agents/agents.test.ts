// Agents end to end: templated mcp task fields checked after rendering, registration as agent,
// POST /api/execute through a real `svc worker` process against real MCP servers built with the
// SDK (Streamable HTTP and the older HTTP+SSE), MCP servers as catalog resources, the listings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
let streamable: TestMcpServer;
let sse: TestMcpServer;

const agentYaml = (path: string, terminal = '') => `
apiVersion: svc/v1
kind: Playbook
metadata:
  name: ${path.split('/').at(-1)}
  path: ${path}
  agent: true
  description: calls an MCP server as the workload says
${terminal}
workload: { server: null, endpoint: null, tool: null, arguments: {} }
workflow:
  - step: start
    tool:
      - name: call
        kind: mcp
        server: "{{ workload.server }}"
        endpoint: "{{ workload.endpoint }}"
        method: "{{ workload.method }}"
        tool: "{{ workload.tool }}"
        arguments: "{{ workload.arguments }}"
`;

const mcpYaml = (name: string, endpoint: string, transport: string) => `
apiVersion: svc/v1
kind: Mcp
metadata: { name: ${name} }
endpoint: ${endpoint}
transport: ${transport}
`;

async function registerAs(content: string, resourceType: string) {
  return http(stack.url, 'POST', '/api/catalog/register', { content, resource_type: resourceType });
}

async function execute(body: Record<string, unknown>) {
  const r = await http(stack.url, 'POST', '/api/execute', body);
  if (r.status !== 200) throw new Error(`execute: ${r.status} ${JSON.stringify(r.body)}`);
  return stack.wait(r.body.execution_id, 30_000);
}

beforeAll(async () => {
  [stack, streamable, sse] = await Promise.all([startWorkerStack(), startMcpServer(), startMcpServer({ transport: 'sse' })]);
  const visible = '  terminal: { visible: true, workspace: research, scopes: [mcp.read], capabilities: [tools/call] }';
  for (const [path, terminal] of [['agents/any', visible], ['agents/hidden', '  terminal: { visible: false, workspace: research }'], ['agents/other', '  terminal: { visible: true, workspace: ops }']]) {
    const r = await registerAs(agentYaml(path, terminal), 'agent');
    if (r.status !== 201) throw new Error(`register ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  }
}, 60_000);
afterAll(async () => Promise.all([stack?.close(), streamable?.close(), sse?.close()]));

describe('agent registration', () => {
  it('registers an agent whose method, tool and arguments are templates', async () => {
    const r = await registerAs(agentYaml('agents/templated'), 'agent');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'success', path: 'agents/templated', kind: 'agent' });
  });

  it('still refuses a literal bad method, naming the field', async () => {
    const bad = agentYaml('agents/bad').replace('method: "{{ workload.method }}"', 'method: tools/destroy');
    const r = await registerAs(bad, 'agent');
    expect(r.status).toBe(400);
    expect(r.body.detail.errors).toEqual([expect.stringMatching(/^workflow\[0\]\.tool\[0\]\.method: must be one of .*tools\/list.*got "?tools\/destroy/)]);
  });

  it('refuses a template with bad syntax in a task field', async () => {
    const bad = agentYaml('agents/bad').replace('"{{ workload.method }}"', '"{{ workload.method "');
    const r = await registerAs(bad, 'agent');
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.detail.errors)).toContain('workflow[0].tool[0].method');
  });
});

describe('POST /api/execute with resource_kind agent', () => {
  it('runs tools/list over Streamable HTTP; the result is the MCP result', async () => {
    const done = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { endpoint: streamable.url, method: 'tools/list' } });
    expect(done.status).toBe('completed');
    expect(done.result.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['echo', 'add', 'fail', 'slow']));
  });

  it('runs tools/call over Streamable HTTP with arguments from the workload', async () => {
    const done = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { endpoint: streamable.url, method: 'tools/call', tool: 'add', arguments: { a: 20, b: 22 } } });
    expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 42 }, content: [{ type: 'text', text: '42' }] } });
  });

  it('runs tools/call over the older HTTP+SSE transport', async () => {
    const done = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { endpoint: sse.url, method: 'tools/call', tool: 'echo', arguments: { text: 'over sse' } } });
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'over sse' }] } });
  });

  it('fails the task naming the field when a rendered value is bad', async () => {
    const done = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { endpoint: streamable.url, method: 'tools/destroy' } });
    expect(done.status).toBe('failed');
    expect(done.error.message).toMatch(/invalid mcp task: method: expected/);
    expect(done.error.code).toBe('invalid_task');
  });

  it('answers 422 when an agent is executed without resource_kind agent', async () => {
    const r = await http(stack.url, 'POST', '/api/execute', { path: 'agents/any', workload: {} });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('resource_kind');
  });

  it('answers 422 for an invalid body, naming the field', async () => {
    const r = await http(stack.url, 'POST', '/api/execute', { path: 'agents/any', resource_kind: 'agent', workload: [1, 2] });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('workload');
    const r2 = await http(stack.url, 'POST', '/api/execute', { resource_kind: 'agent' });
    expect(r2.status).toBe(422);
    expect(JSON.stringify(r2.body.detail)).toContain('path');
  });

  it('answers 404 Executable catalog entry not found for a path not registered as an agent', async () => {
    const playbook = agentYaml('plain/not-agent').replace('  agent: true\n', '');
    expect((await http(stack.url, 'POST', '/api/catalog/register', { content: playbook })).status).toBe(201);
    for (const path of ['plain/not-agent', 'agents/never-registered']) {
      const r = await http(stack.url, 'POST', '/api/execute', { path, resource_kind: 'agent', workload: {} });
      expect(r.status).toBe(404);
      expect(r.body.detail).toBe('Executable catalog entry not found');
    }
  });
});

describe('MCP servers as catalog resources', () => {
  beforeAll(async () => {
    for (const [name, url, transport] of [['tools-http', streamable.url, 'streamable-http'], ['tools-sse', sse.url, 'sse']]) {
      const r = await registerAs(mcpYaml(name, url, transport), 'mcp');
      if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      expect(r.body).toMatchObject({ status: 'success', path: `mcp/${name}`, kind: 'mcp' });
    }
  });

  it('resolves `server: <name>` on the worker, for both transports', async () => {
    const viaHttp = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { server: 'tools-http', method: 'tools/call', tool: 'add', arguments: { a: 1, b: 2 } } });
    expect(viaHttp).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 3 } } });
    const before = sse.authorizations.length;
    const viaSse = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { server: 'tools-sse', method: 'tools/list' } });
    expect(viaSse.status).toBe('completed');
    expect(viaSse.result.tools.length).toBeGreaterThan(0);
    expect(sse.authorizations.length).toBeGreaterThan(before);
  });

  it('fails the task when the named server is not registered', async () => {
    const done = await execute({ path: 'agents/any', resource_kind: 'agent', workload: { server: 'nowhere', method: 'tools/list' } });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'mcp_server_not_found', message: expect.stringContaining("server: MCP server 'nowhere' is not registered") });
  });

  it('lists the servers with their status', async () => {
    const r = await http(stack.url, 'GET', '/api/mcp/servers');
    expect(r.status).toBe(200);
    expect(r.body.items.filter((s: { name: string }) => s.name.startsWith('tools-'))).toEqual([
      expect.objectContaining({ name: 'tools-http', path: 'mcp/tools-http', endpoint: streamable.url, transport: 'streamable-http', status: 'registered', lifecycle: [], updated_at: expect.any(String) }),
      expect.objectContaining({ name: 'tools-sse', endpoint: sse.url, transport: 'sse', status: 'registered' }),
    ]);
  });

  it('refuses a bad Mcp document naming the field', async () => {
    const r = await registerAs(mcpYaml('bad', 'not a url', 'carrier-pigeon'), 'mcp');
    expect(r.status).toBe(400);
    const errors = JSON.stringify(r.body.detail.errors);
    expect(errors).toContain('endpoint');
    expect(errors).toContain('transport');
  });

  it('dispatches a lifecycle action with the server document and the payload; its outcome is the status', async () => {
    const action = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: backup, path: lifecycle/backup }
workflow:
  - step: start
    tool:
      - { name: report, kind: noop }
    next: [ { step: done, set: { seen: "{{ workload.server.name }} {{ workload.server.endpoint }} {{ workload.action }} {{ workload.label }} {{ args.server.transport }}" } } ]
  - step: done
    tool:
      - { name: fail_when_asked, kind: shell, env: { FAIL: "{{ workload.fail | default(false) }}", SEEN: "{{ vars.seen }}" }, command: 'echo "$SEEN"; [ "$FAIL" != "true" ]' }
`;
    expect((await stack.register(action)).path).toBe('lifecycle/backup');
    const doc = `${mcpYaml('with-actions', streamable.url, 'auto')}lifecycle: { backup: lifecycle/backup, deploy: lifecycle/missing }\n`;
    expect((await registerAs(doc, 'mcp')).status).toBe(201);

    const r = await http(stack.url, 'POST', '/api/mcp/mcp/with-actions/lifecycle/backup', { payload: { label: 'nightly' } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ server: 'with-actions', action: 'backup', status: 'started', execution_id: expect.any(Number) });
    const done = await stack.wait(r.body.execution_id, 30_000);
    expect(done.status).toBe('completed');
    expect(done.result.stdout.trim()).toBe(`with-actions ${streamable.url} backup nightly auto`);
    expect((await http(stack.url, 'GET', '/api/mcp/servers/with-actions')).body).toMatchObject({ status: 'backup_completed', last_action: 'backup', last_execution_id: r.body.execution_id, lifecycle: ['deploy', 'backup'] });

    const failing = await http(stack.url, 'POST', '/api/mcp/mcp/with-actions/lifecycle/backup', { payload: { fail: true } });
    expect((await stack.wait(failing.body.execution_id, 30_000)).status).toBe('failed');
    expect((await http(stack.url, 'GET', '/api/mcp/servers/with-actions')).body.status).toBe('backup_failed');

    const badBody = await http(stack.url, 'POST', '/api/mcp/mcp/with-actions/lifecycle/backup', { payload: [1] });
    expect(badBody.status).toBe(422);
    expect(JSON.stringify(badBody.body.detail)).toContain('payload');
    const missingPlaybook = await http(stack.url, 'POST', '/api/mcp/mcp/with-actions/lifecycle/deploy', {});
    expect(missingPlaybook.status).toBe(404);
    expect(missingPlaybook.body.detail).toContain('lifecycle/missing');
    expect((await http(stack.url, 'GET', '/api/mcp/servers/with-actions')).body.status).toBe('backup_failed');
  });

  it('does not run an Mcp document as a playbook', async () => {
    const r = await http(stack.url, 'POST', '/api/run/playbook', { path: 'mcp/tools-http' });
    expect(r.status).toBe(422);
  });
});

describe('GET /api/agents', () => {
  it('lists the visible agents with their terminal data', async () => {
    const r = await http(stack.url, 'GET', '/api/agents');
    expect(r.status).toBe(200);
    const paths = r.body.items.map((a: { path: string }) => a.path);
    expect(paths).toEqual(['agents/any', 'agents/other']);
    expect(r.body.items[0]).toEqual({
      path: 'agents/any',
      catalog_id: expect.any(Number),
      version: 1,
      name: 'any',
      workspace: 'research',
      scopes: ['mcp.read'],
      capabilities: ['tools/call'],
      description: 'calls an MCP server as the workload says',
    });
  });

  it('filters by workspace', async () => {
    const r = await http(stack.url, 'GET', '/api/agents?workspace=ops');
    expect(r.body.items.map((a: { path: string }) => a.path)).toEqual(['agents/other']);
    const none = await http(stack.url, 'GET', '/api/agents?workspace=nobody');
    expect(none.body.items).toEqual([]);
  });
});

describe('OpenAPI', () => {
  it('lists the agent and MCP routes', async () => {
    const r = await http(stack.url, 'GET', '/docs/json');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.paths)).toEqual(
      expect.arrayContaining(['/api/agents', '/api/mcp/servers', '/api/mcp/servers/{name}', '/api/mcp/mcp/{server_name}/lifecycle/{action}']),
    );
  });
});
