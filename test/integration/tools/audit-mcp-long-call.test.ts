// An mcp task's call waits as long as its `timeout_seconds` says, and without one, as every other
// kind does, until the answer comes (src/worker/tools/mcp.ts: "so long tool calls are not cut
// short"). But the MCP client's own request timeout was set to one hour for such a task: a tool
// working for 70 minutes failed `mcp_error` ('MCP error -32001: Request timed out') at 60. The
// clock is advanced here (fake timers, so the tool is called in this process, not by a worker
// process) against a real MCP server on port 0 whose `slow` tool answers after 70 minutes of it.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';

const SEVENTY_MINUTES = 70 * 60_000;

let server: TestMcpServer;
beforeAll(async () => {
  server = await startMcpServer();
});
afterAll(async () => server?.close());

it('a tools/call without timeout_seconds waits past an hour for its answer', async () => {
  // Every timer of the call (the client's, the server's tool) on the fake clock; the sockets run
  // meanwhile: the first steps let the client connect and send the call.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  let outcome: ReturnType<typeof mcp>;
  try {
    outcome = mcp({ name: 't', kind: 'mcp', endpoint: server.url, method: 'tools/call', tool: 'slow', arguments: { ms: SEVENTY_MINUTES } }, { signal: new AbortController().signal, env: {} });
    for (let i = 0; i < 200; i++) await vi.advanceTimersByTimeAsync(5);
    for (let minute = 0; minute <= 70; minute++) await vi.advanceTimersByTimeAsync(60_000);
  } finally {
    vi.useRealTimers();
  }
  const o = await outcome;
  expect(o).toMatchObject({ status: 'ok', data: { content: [{ type: 'text', text: `waited ${SEVENTY_MINUTES}` }] } });
}, 60_000);
