// An MCP server that answers, but not as MCP: an HTTP error status with a large body, a result that
// fails the protocol's schema in thousands of places, a body that is not JSON, a JSON-RPC error with
// a huge message. Each became the task's error message whole (3,000,062 characters for a 500 with a
// 3 MB body; 3,508,904 for a zod issue dump of 20,000 bad tools), stored in the event log, and the
// answered-but-wrong ones were code `connection`, which says the server was not reached. Now the
// server's text in a message is cut at 500 characters (as a tool_error's is) and an answer that is
// not MCP is `mcp_error`, named in one line. The servers are real HTTP servers speaking JSON-RPC
// over Streamable HTTP; the last case runs through a real server and worker process. And one that
// answers nothing where the SDK waits without a bound: the task ends at its timeout.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { TaskOutcome, ToolContext } from '../../../src/worker/tools/types.ts';
import { http } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

type Rpc = { id?: number; method: string; params?: { protocolVersion?: string } };
const TOKEN = 'mcp-bad-answers-token-7f3a9c';
const BIG = 3_000_000;
// The server's text is cut at 500 characters; the rest of a message is ours.
const MESSAGE_MAX = 700;

async function bodyOf(req: IncomingMessage): Promise<Rpc> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Rpc;
}

const json = { 'content-type': 'application/json' };
let server: Server;
let url: (answer: string) => string;
let stack: WorkerStack;
// tools/list pages the 'paging-forever' answer served.
let pagesServed = 0;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const answer = new URL(req.url ?? '/', 'http://x').searchParams.get('answer');
    if (answer === 'sse-silent') {
      // Speaks only the older transport (405 to Streamable HTTP), whose stream never names the endpoint to POST to.
      if (req.method !== 'GET') return void res.writeHead(405).end();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return void res.write(': nothing to say\n\n');
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const rpc = await bodyOf(req);
    // The server's text quotes the token the client sent, past the cut.
    const echoed = `${'E'.repeat(498)}${TOKEN}${'E'.repeat(BIG)}`;
    if (answer === 'init-500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end(echoed);
    if (rpc.method === 'initialize') {
      const result = { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bad', version: '1' } };
      return void res.writeHead(200, { ...json, 'mcp-session-id': 'session-1' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result }));
    }
    if (rpc.id === undefined) return void res.writeHead(202).end();
    if (answer === 'status-500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end(echoed);
    if (answer === 'session-gone') return void res.writeHead(404, json).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    if (answer === 'paging-forever') {
      pagesServed++;
      return void res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { tools: [{ name: `t${pagesServed}`, inputSchema: { type: 'object' } }], nextCursor: 'again' } }));
    }
    if (answer === 'garbled-stream') {
      // The answer's event stream carries a message that is not JSON, then stays open.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return void res.write('event: message\ndata: {"jsonrpc":"2.0","id":\n\n');
    }
    if (answer === 'not-json') return void res.writeHead(200, json).end('{not json');
    if (answer === 'bad-tools') return void res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { tools: Array.from({ length: 20_000 }, () => 1) } }));
    if (answer === 'rpc-error') return void res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, error: { code: -32603, message: echoed } }));
    res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { tools: [] } }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = (answer) => `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp?answer=${answer}`;
  stack = await startWorkerStack();
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(20_000), env: {} });
const list = (answer: string) => mcp({ name: 't', kind: 'mcp', server: 'bad', endpoint: url(answer), method: 'tools/list', access_token: TOKEN }, ctx());

function expectShort(outcome: TaskOutcome, code: string): string {
  expect(outcome).toMatchObject({ status: 'error', error: { code } });
  const message = outcome.error?.message ?? '';
  expect(message.length).toBeLessThan(MESSAGE_MAX);
  expect(message).not.toContain(TOKEN);
  expect(message).not.toContain(TOKEN.slice(0, 8));
  return message;
}

describe('an MCP server that answers, but not as MCP', () => {
  it('an HTTP 500 with a 3 MB body to tools/list: mcp_error, the body cut, the token masked', async () => {
    const message = expectShort(await list('status-500'), 'mcp_error');
    expect(message).toMatch(/^MCP server 'bad' answered tools\/list with HTTP 500: E+/);
    expect(message.endsWith('…')).toBe(true);
  });

  it('a session the server no longer knows (404): mcp_error naming the status', async () => {
    expect(expectShort(await list('session-gone'), 'mcp_error')).toContain('HTTP 404');
  });

  it('a body that is not JSON: mcp_error', async () => {
    expect(expectShort(await list('not-json'), 'mcp_error')).toMatch(/^MCP server 'bad' answered tools\/list with something that is not JSON/);
  });

  it('a message that is not JSON on the stream the answer comes on, the stream left open: mcp_error at once, not held till the timeout', async () => {
    // The SDK dropped the message and waited on for the answer: an hour without timeout_seconds.
    const started = Date.now();
    expect(expectShort(await list('garbled-stream'), 'mcp_error')).toMatch(/^MCP server 'bad' answered tools\/list with something that is not JSON/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a result that fails the schema in 20,000 places: mcp_error, the first problem in one line', async () => {
    const message = expectShort(await list('bad-tools'), 'mcp_error');
    expect(message).toBe("MCP server 'bad' answered tools/list with something that is not an MCP answer: tools.0: Invalid input: expected object, received number (and 19,999 more problems)");
  });

  it('a JSON-RPC error whose message is 3 MB: mcp_error, cut', async () => {
    expectShort(await list('rpc-error'), 'mcp_error');
  });

  it('an HTTP 500 with a 3 MB body to initialize: mcp_error (it answered; audit-mcp-answered-initialize), cut', async () => {
    expect(expectShort(await list('init-500'), 'mcp_error')).toMatch(/^MCP server 'bad' at \S+ answered initialize with HTTP 500: E+/);
  });

  it('a tools/list that pages without end: mcp_error after 100 pages, not ok with the first 100', async () => {
    // The paging stopped at 100 pages and answered ok with what it had: a list cut short, stored as the server's.
    const outcome = await list('paging-forever');
    expect(expectShort(outcome, 'mcp_error')).toBe("MCP server 'bad' was still paging tools/list after 100 pages: not followed further");
    expect(pagesServed).toBe(100);
  });

  it.each(['sse', 'auto'])('an HTTP+SSE stream that never names its endpoint (transport %s): timeout at the task\'s timeout, not held forever', async (transport) => {
    // The SDK waits for the endpoint event without a bound and the task's signal did not reach
    // that wait: the task, and the worker's slot, were held past timeout_seconds for good.
    const started = Date.now();
    const outcome = await mcp({ name: 't', kind: 'mcp', endpoint: url('sse-silent'), transport, method: 'tools/list' }, { signal: AbortSignal.timeout(1_000), env: {} });
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(4_000);
  }, 15_000);

  it('an agent run through a worker stores the short message, not the server\'s 3 MB', async () => {
    const agent = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: bad-answers, path: agents/bad-answers, agent: true }
workload: { endpoint: null }
workflow:
  - step: start
    tool:
      - { name: call, kind: mcp, endpoint: "{{ workload.endpoint }}", method: tools/list }
`;
    expect((await http(stack.url, 'POST', '/api/catalog/register', { content: agent, resource_type: 'agent' })).status).toBe(201);
    const started = await http(stack.url, 'POST', '/api/execute', { path: 'agents/bad-answers', resource_kind: 'agent', workload: { endpoint: url('status-500'), access_token: TOKEN } });
    expect(started.status).toBe(200);
    const done = await stack.wait(started.body.execution_id, 30_000);
    expect(done).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'mcp_error' }) });
    const events = await http(stack.url, 'GET', `/api/events/${started.body.execution_id}`);
    const text = JSON.stringify(events.body);
    expect(text.length).toBeLessThan(50_000);
    expect(text).not.toContain(TOKEN);
  }, 60_000);
});
