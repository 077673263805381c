// An MCP server that closes the stream its answer would come on, mid-call, without answering (it
// crashed, restarted, or a proxy cut the connection): the SDK waited for that answer until the
// request's timeout, an hour by default, so the agent's execution hung. The call now ends at once,
// code `connection`, over Streamable HTTP (an event stream ended or cut) and over the older
// HTTP+SSE transport (its session's stream), in the tool and in an agent run through a worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let streamable: TestMcpServer;
let sse: TestMcpServer;
let stack: WorkerStack;
beforeAll(async () => {
  [streamable, sse, stack] = await Promise.all([startMcpServer({ hangup: true }), startMcpServer({ transport: 'sse', hangup: true }), startWorkerStack()]);
}, 60_000);
afterAll(async () => Promise.all([streamable?.close(), sse?.close(), stack?.close()]));

// Without timeout_seconds the SDK waits an hour; 20 s stands for "held" here.
const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(20_000), env: {} });
const call = (endpoint: string, how: string, transport = 'auto') => ({ name: 't', kind: 'mcp', server: 'flaky', endpoint, transport, method: 'tools/call', tool: 'hangup', arguments: { how } });

describe('an MCP server that closes its answer without answering', () => {
  it.each([
    ['Streamable HTTP, the event stream ended', 'end', 'auto'],
    ['Streamable HTTP, the connection cut', 'destroy', 'streamable-http'],
  ])('%s: connection, at once', async (_, how, transport) => {
    const started = Date.now();
    const outcome = await mcp(call(streamable.url, how, transport), ctx());
    expect(outcome).toEqual({ status: 'error', data: null, error: { code: 'connection', message: "MCP server 'flaky' ended its answer to tools/call without answering it" } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each([['end'], ['destroy']])('HTTP+SSE, the session stream closed (%s): connection, at once', async (how) => {
    const started = Date.now();
    const outcome = await mcp(call(sse.url, how, 'sse'), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection', message: "MCP server 'flaky' ended its answer to tools/call without answering it" } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the same servers still answer every other call, on both transports', async () => {
    for (const [endpoint, transport] of [[streamable.url, 'streamable-http'], [sse.url, 'sse'], [sse.url, 'auto']]) {
      const added = await mcp({ ...call(endpoint, 'end', transport), tool: 'add', arguments: { a: 20, b: 22 } }, ctx());
      expect(added).toMatchObject({ status: 'ok', data: { structuredContent: { sum: 42 } } });
      const listed = await mcp({ ...call(endpoint, 'end', transport), method: 'tools/list' }, ctx());
      expect(listed).toMatchObject({ status: 'ok', data: { tools: expect.arrayContaining([expect.objectContaining({ name: 'hangup' })]) } });
    }
  });

  it('an agent run whose server hangs up fails with connection instead of waiting its hour', async () => {
    const agent = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: hangup, path: agents/hangup, agent: true }
workload: { endpoint: null }
workflow:
  - step: start
    tool:
      - { name: call, kind: mcp, endpoint: "{{ workload.endpoint }}", method: tools/call, tool: hangup, arguments: { how: end } }
`;
    expect((await http(stack.url, 'POST', '/api/catalog/register', { content: agent, resource_type: 'agent' })).status).toBe(201);
    const started = await http(stack.url, 'POST', '/api/execute', { path: 'agents/hangup', resource_kind: 'agent', workload: { endpoint: streamable.url } });
    expect(started.status).toBe(200);
    const done = await stack.wait(started.body.execution_id, 20_000);
    expect(done).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'connection', message: expect.stringContaining('ended its answer to tools/call without answering it') }) });
  });
});
