// An mcp task's rendered fields, checked by the worker against a real MCP server (the SDK's):
// a bad `arguments` or a task with neither `server` nor `endpoint` fails with invalid_task naming
// the field and what it expects (docs/agents.md), never valibot's "expected unknown" or a field
// the task did not get wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';

let server: TestMcpServer;
beforeAll(async () => {
  server = await startMcpServer();
});
afterAll(async () => server?.close());

const ctx = (): ToolContext => ({ signal: new AbortController().signal, env: {} });
const task = (fields: Record<string, unknown>) => ({ name: 't', kind: 'mcp', endpoint: server.url, method: 'tools/call', tool: 'add', ...fields });

describe('an mcp task whose fields rendered wrong', () => {
  it.each([['text'], [5], [true]])('arguments %j: invalid_task, arguments: expected an object, nothing called', async (value) => {
    const before = server.authorizations.length;
    const outcome = await mcp(task({ arguments: value }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_task', message: 'invalid mcp task: arguments: expected an object' } });
    expect(server.authorizations.length).toBe(before);
  });

  it('arguments as an array: invalid_task too (the tool would get {"0": …})', async () => {
    const outcome = await mcp(task({ arguments: [1, 2] }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_task', message: 'invalid mcp task: arguments: expected an object' } });
  });

  it('neither server nor endpoint (both rendered null): says one of them is required', async () => {
    const outcome = await mcp(task({ server: null, endpoint: null, method: 'tools/list' }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_task', message: 'invalid mcp task: server or endpoint: one is required' } });
  });

  it('an object, or none, still calls the tool', async () => {
    expect(await mcp(task({ arguments: { a: 1, b: 2 } }), ctx())).toMatchObject({ status: 'ok', data: { structuredContent: { sum: 3 } } });
    expect(await mcp(task({ tool: 'echo', arguments: { text: 'hi' } }), ctx())).toMatchObject({ status: 'ok', data: { content: [{ type: 'text', text: 'hi' }] } });
    expect(await mcp(task({ method: 'tools/list', tool: null, arguments: null }), ctx())).toMatchObject({ status: 'ok' });
  });
});
