// An MCP server that was reached and answered with an HTTP error status (a 401 for a token it
// refuses, a 403) failed the task with code `connection` ("the target could not be reached") when
// it came at the start (initialize, the HTTP+SSE stream) or on the HTTP+SSE transport at all,
// or to both transports of an `auto` endpoint, though docs/agents.md says an HTTP error status is
// `mcp_error`. Now it is, token masked.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { TaskOutcome } from '../../../src/worker/tools/types.ts';

const TOKEN = 'mcp-refused-token-2b7e41';
type Rpc = { id?: number; method: string; params?: { protocolVersion?: string } };
const json = { 'content-type': 'application/json' };
const initialized = (rpc: Rpc) => ({ jsonrpc: '2.0', id: rpc.id, result: { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'locked', version: '1' } } });

async function bodyOf(req: IncomingMessage): Promise<Rpc> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Rpc;
}

let server: Server;
let base: string;
// The HTTP+SSE session's stream, where that transport's answers go.
let sseStream: ServerResponse | undefined;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const { pathname, searchParams } = new URL(req.url ?? '/', 'http://x');
    const refusal = `token refused: ${req.headers.authorization ?? 'none'}`;
    if (pathname === '/streamable-401') return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="mcp"', 'content-type': 'text/plain' }).end(refusal);
    if (pathname === '/sse-401') return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="mcp"', 'content-type': 'text/plain' }).end(refusal);
    // HTTP+SSE only: the stream names where to POST; initialize is answered, tools/call refused 403.
    if (pathname === '/sse' && req.method === 'GET') {
      sseStream = res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return void res.write('event: endpoint\ndata: /messages\n\n');
    }
    if (pathname === '/messages' && req.method === 'POST') {
      const rpc = await bodyOf(req);
      if (rpc.method === 'tools/call' || searchParams.has('refuse')) return void res.writeHead(403, { 'content-type': 'text/plain' }).end(refusal);
      if (rpc.method === 'initialize') sseStream?.write(`event: message\ndata: ${JSON.stringify(initialized(rpc))}\n\n`);
      return void res.writeHead(202).end();
    }
    res.writeHead(405, json).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const call = (path: string, transport: string) =>
  mcp({ name: 't', kind: 'mcp', server: 'locked', endpoint: `${base}${path}`, transport, method: 'tools/call', tool: 'echo', arguments: {}, access_token: TOKEN }, { signal: AbortSignal.timeout(10_000), env: {} });

function refused(outcome: TaskOutcome, status: number): string {
  expect(outcome).toMatchObject({ status: 'error', error: { code: 'mcp_error' } });
  const message = outcome.error?.message ?? '';
  expect(message).toContain(`HTTP ${status}`);
  expect(message).not.toContain(TOKEN);
  return message;
}

describe('an MCP server that answers with an HTTP error status', () => {
  it('Streamable HTTP, initialize answered 401: mcp_error, not connection', async () => {
    expect(refused(await call('/streamable-401', 'streamable-http'), 401)).toBe(`MCP server 'locked' at ${base}/streamable-401 answered initialize with HTTP 401: token refused: Bearer ***`);
  });

  it('HTTP+SSE, its stream answered 401: mcp_error', async () => {
    expect(refused(await call('/sse-401', 'sse'), 401)).toMatch(/^MCP server 'locked' at \S+ answered initialize with HTTP 401/);
  });

  it('HTTP+SSE, a tools/call answered 403: mcp_error, as on Streamable HTTP', async () => {
    expect(refused(await call('/sse', 'sse'), 403)).toBe("MCP server 'locked' answered tools/call with HTTP 403: token refused: Bearer ***");
  });

  it('auto, an endpoint that neither transport serves (405 to both): mcp_error naming both answers', async () => {
    expect(refused(await call('/nowhere', 'auto'), 405)).toBe(`MCP server 'locked' at ${base}/nowhere answered initialize with HTTP 405 (Streamable HTTP), then over the SSE fallback HTTP 405: Non-200 status code (405)`);
  });

  it('a server that is not there is still connection', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await mcp({ name: 't', kind: 'mcp', endpoint: `http://127.0.0.1:${port}/mcp`, method: 'tools/list' }, { signal: AbortSignal.timeout(10_000), env: {} });
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
  });
});
