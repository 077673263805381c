// An MCP server that answers, in a way the MCP client will not use: an HTML page where JSON or an
// event stream belongs (a login proxy in front of it), a 204, a protocol version the client does
// not speak, an HTTP+SSE stream that is not one or that names an endpoint on another origin. Each
// failed the task `connection`, which says the server was not reached (and which a retry.when on
// it retries), where docs/agents.md has an answer that is not MCP as mcp_error. Each is mcp_error
// now, saying what came. The servers are real HTTP servers on port 0.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';

type Rpc = { id?: number; method?: string; params?: { protocolVersion?: string } };

async function bodyOf(req: IncomingMessage): Promise<Rpc> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Rpc) : {};
}

const json = { 'content-type': 'application/json' };
const html = { 'content-type': 'text/html' };
let server: Server;
let endpoint: (answer: string) => string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const answer = new URL(req.url ?? '/', 'http://x').searchParams.get('answer') ?? '';
    if (answer.startsWith('sse-')) {
      // Speaks only the older transport (405 to Streamable HTTP).
      if (req.method !== 'GET') return void res.writeHead(405).end();
      if (answer === 'sse-html') return void res.writeHead(200, html).end('<html>sign in</html>');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.write('event: endpoint\ndata: http://elsewhere.example/messages\n\n');
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const rpc = await bodyOf(req);
    if (answer === 'init-html') return void res.writeHead(200, html).end('<html>sign in</html>');
    if (rpc.method === 'initialize') {
      const protocolVersion = answer === 'init-version' ? '1999-01-01' : rpc.params?.protocolVersion;
      const result = { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'unusable', version: '1' } };
      return void res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result }));
    }
    if (rpc.id === undefined) return void res.writeHead(202).end();
    if (answer === 'call-html') return void res.writeHead(200, html).end('<html>sign in</html>');
    if (answer === 'call-204') return void res.writeHead(204).end();
    res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { content: [{ type: 'text', text: 'ok' }] } }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = (answer) => `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp?answer=${answer}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(10_000), env: {} });
const call = (answer: string) => mcp({ name: 't', kind: 'mcp', server: 'unusable', endpoint: endpoint(answer), method: 'tools/call', tool: 'echo', arguments: {} }, ctx());
const at = (answer: string) => `MCP server 'unusable' at ${endpoint(answer).replace(/\?.*$/, '')} answered initialize with`;

describe('an MCP server whose answer the client will not use', () => {
  it('an HTML page to initialize: mcp_error naming its content type', async () => {
    expect((await call('init-html')).error).toEqual({ code: 'mcp_error', message: `${at('init-html')} something that is not an MCP answer: content type text/html, neither JSON nor an event stream` });
  });

  it('an HTML page, or a 204, to tools/call: mcp_error', async () => {
    expect((await call('call-html')).error).toEqual({ code: 'mcp_error', message: "MCP server 'unusable' answered tools/call with something that is not an MCP answer: content type text/html, neither JSON nor an event stream" });
    expect((await call('call-204')).error).toEqual({ code: 'mcp_error', message: "MCP server 'unusable' answered tools/call with something that is not an MCP answer: content type (none), neither JSON nor an event stream" });
  });

  it('a protocol version the client does not speak: mcp_error naming it and those it speaks', async () => {
    const outcome = await call('init-version');
    expect(outcome.error?.code).toBe('mcp_error');
    expect(outcome.error?.message).toMatch(new RegExp(`^${at('init-version').replace(/[.?*()]/g, '\\$&')} protocol version 1999-01-01, which this client does not speak \\(it speaks .*2025-06-18.*\\)$`));
  });

  it('over the HTTP+SSE fallback, an HTML page or an endpoint on another origin: mcp_error', async () => {
    expect((await call('sse-html')).error).toEqual({
      code: 'mcp_error',
      message: `${at('sse-html')} HTTP 405 (Streamable HTTP), then over the SSE fallback something that is not an MCP event stream: HTTP 200, Invalid content type, expected "text/event-stream"`,
    });
    expect((await call('sse-foreign')).error).toEqual({
      code: 'mcp_error',
      message: `${at('sse-foreign')} HTTP 405 (Streamable HTTP), then over the SSE fallback an endpoint on another origin, http://elsewhere.example: not posted to`,
    });
  });

  it('the same server still answers a call it answers as MCP', async () => {
    expect(await call('fine')).toMatchObject({ status: 'ok', data: { content: [{ type: 'text', text: 'ok' }] } });
  });
});
