#!/usr/bin/env node
// A small MCP server built with the MCP SDK, for trying agents and the MCP lifecycle on one
// machine: `node examples/mcp/demo-server.mjs --port 8931`. It serves Streamable HTTP at /mcp,
// the older HTTP+SSE transport at /sse (messages at /messages), and GET /health ("ok").
// Tools: echo {text}, add {a, b}, time {}. SIGTERM stops it.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

const { values } = parseArgs({ options: { port: { type: 'string', default: '8931' }, host: { type: 'string', default: '127.0.0.1' } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port expects a port number, got ${values.port}`);
  process.exit(2);
}

function buildServer() {
  const server = new McpServer({ name: 'svc-demo-mcp', version: '1.0.0' });
  server.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool('time', { description: 'The server time (ISO 8601)', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: new Date().toISOString() }] }));
  return server;
}

const sseSessions = new Map();

const http = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  try {
    if (url.pathname === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (url.pathname === '/mcp') {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      // Stateless: a server and transport per request.
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } else if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sseSessions.set(transport.sessionId, transport);
      res.on('close', () => sseSessions.delete(transport.sessionId));
      await buildServer().connect(transport);
    } else if (url.pathname === '/sse') {
      res.writeHead(405, { allow: 'GET' }).end();
    } else if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sseSessions.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return void res.writeHead(404).end('unknown session');
      await transport.handlePostMessage(req, res);
    } else {
      res.writeHead(404).end();
    }
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
  }
});

http.listen(port, values.host, () => {
  const address = http.address();
  console.log(`demo MCP server on http://${values.host}:${address.port} (Streamable HTTP /mcp, SSE /sse), pid ${process.pid}`);
});

const stop = () => {
  for (const transport of sseSessions.values()) void transport.close();
  http.close(() => process.exit(0));
  http.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
