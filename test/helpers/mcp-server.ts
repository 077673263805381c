// A real MCP server (the SDK's McpServer) on 127.0.0.1, port 0, for tests of MCP clients. Tools:
// `echo {text}`, `add {a, b}` (structured `{sum}`), `fail {text?}` (an isError result), `slow {ms}`,
// and with `hangup: true` `hangup {how?}` (closes the stream its answer would come on, `end` or
// `destroy`, and never answers).
// Streamable HTTP is stateless (a server per request) at `/mcp`; with `transport: 'sse'` the old
// HTTP+SSE transport is served instead at `/sse` (POST there answers 405, as an SSE-only server does).
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

export type McpServerOptions = { transport?: 'streamable' | 'sse'; hangup?: boolean };

export type TestMcpServer = {
  /** The endpoint an MCP client connects to. */
  url: string;
  /** The Authorization header of every HTTP request received (undefined when absent). */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
};

/** Starts the server; `close()` ends open sessions and connections. */
export async function startMcpServer(options: McpServerOptions = {}): Promise<TestMcpServer> {
  const authorizations: (string | undefined)[] = [];
  const sseSessions = new Map<string, SSEServerTransport>();

  const http = createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    const path = new URL(req.url ?? '/', 'http://mcp').pathname;
    try {
      if (options.transport === 'sse') await serveSse(req, res, path, sseSessions, options);
      else await serveStreamable(req, res, path, options);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
    }
  });

  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const address = http.address();
  if (address === null || typeof address === 'string') throw new Error('mcp server is not listening on TCP');
  const base = `http://127.0.0.1:${address.port}`;
  return {
    url: options.transport === 'sse' ? `${base}/sse` : `${base}/mcp`,
    authorizations,
    close: async () => {
      for (const transport of sseSessions.values()) await transport.close().catch(() => {});
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/** `answers`: the response the server's answers are written to (the POST's, or the SSE session's stream). */
function buildServer(answers: ServerResponse, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'svc-test-mcp', version: '1.0.0' });
  server.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool('fail', { description: 'Always reports a tool error', inputSchema: { text: z.string().optional() } }, async ({ text }) => ({
    content: [{ type: 'text', text: text ?? 'the tool failed on purpose' }],
    isError: true,
  }));
  server.registerTool('slow', { description: 'Answers after ms milliseconds', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: `waited ${ms}` }] };
  });
  if (!options.hangup) return server;
  server.registerTool('hangup', { description: 'Closes the stream its answer would come on and never answers', inputSchema: { how: z.enum(['end', 'destroy']).optional() } }, async ({ how }) => {
    // Once the answer's event stream is open (the transport opens it as the tool begins), it closes.
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (how === 'destroy') answers.destroy();
    else answers.end();
    return new Promise<never>(() => {});
  });
  return server;
}

async function serveStreamable(req: IncomingMessage, res: ServerResponse, path: string, options: McpServerOptions): Promise<void> {
  if (path !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== 'POST') {
    // Stateless: no standalone SSE stream (GET) and no session to delete (DELETE).
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const server = buildServer(res, options);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

async function serveSse(req: IncomingMessage, res: ServerResponse, path: string, sessions: Map<string, SSEServerTransport>, options: McpServerOptions): Promise<void> {
  if (path === '/sse' && req.method === 'GET') {
    const transport = new SSEServerTransport('/messages', res);
    sessions.set(transport.sessionId, transport);
    res.on('close', () => sessions.delete(transport.sessionId));
    await buildServer(res, options).connect(transport);
    return;
  }
  if (path === '/sse') {
    res.writeHead(405, { allow: 'GET' }).end();
    return;
  }
  if (path === '/messages' && req.method === 'POST') {
    const sessionId = new URL(req.url ?? '/', 'http://mcp').searchParams.get('sessionId') ?? '';
    const transport = sessions.get(sessionId);
    if (!transport) {
      res.writeHead(404).end('unknown session');
      return;
    }
    await transport.handlePostMessage(req, res);
    return;
  }
  res.writeHead(404).end();
}
