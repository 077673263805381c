// A Streamable HTTP answer stream that gave an event id and ended without the answer (a server
// restarted, a proxy cut a long call) is resumed by the MCP client with a GET and Last-Event-ID.
// When the server refused that GET (404: the session went with the restart; 405: it resumes
// nothing; 500) or could not be reached, the SDK gave up in silence (405 at once, the others after
// its retries) and the call waited for its answer till the task's timeout (about 24.8 days
// without timeout_seconds). It now ends at once, `connection`, saying how the resumption went; a
// resumption that brings the answer still answers the call.
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
const sse = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
let server: Server;
let endpoint: (resume: string) => string;
// The Last-Event-ID of each resumption asked for.
const resumptions: string[] = [];
// The id of the tools/call waiting, for the resumption that answers it.
let callId: number | undefined;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const resume = new URL(req.url ?? '/', 'http://x').searchParams.get('resume');
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method === 'GET') {
      const lastEventId = req.headers['last-event-id'];
      // The client's own stream for server messages, asked for after initialize: none here.
      if (typeof lastEventId !== 'string') return void res.writeHead(405).end();
      resumptions.push(lastEventId);
      if (resume === 'unreachable') return void req.socket.destroy();
      if (resume === 'answers') {
        res.writeHead(200, sse);
        const result = { content: [{ type: 'text', text: 'resumed' }] };
        return void res.end(`id: ev-2\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result })}\n\n`);
      }
      return void res.writeHead(Number(resume)).end('no such stream');
    }
    const rpc = await bodyOf(req);
    if (rpc.method === 'initialize') {
      const result = { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'resuming', version: '1' } };
      return void res.writeHead(200, { ...json, 'mcp-session-id': 'session-1' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result }));
    }
    if (rpc.id === undefined) return void res.writeHead(202).end();
    // The call's answer stream: a priming event with an id (resumable), then it ends unanswered.
    callId = rpc.id;
    res.writeHead(200, sse);
    res.write('id: ev-1\ndata: \n\n');
    setTimeout(() => res.end(), 20);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = (resume) => `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp?resume=${resume}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

// Without timeout_seconds a call waits about 24.8 days; 15 s stands for "held" here.
const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(15_000), env: {} });
const call = (resume: string) => mcp({ name: 't', kind: 'mcp', server: 'resuming', endpoint: endpoint(resume), method: 'tools/call', tool: 'work', arguments: {} }, ctx());

describe('a Streamable HTTP answer the MCP client could not resume', () => {
  it.each(['404', '405', '500'])('the server answers the resumption %s: connection, at once', async (status) => {
    resumptions.length = 0;
    const started = Date.now();
    const outcome = await call(status);
    expect(outcome).toEqual({
      status: 'error',
      data: null,
      error: { code: 'connection', message: `MCP server 'resuming' ended its answer to tools/call without answering it, and answered its resumption with HTTP ${status}` },
    });
    expect(resumptions).toEqual(['ev-1']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the resumption is not reached, twice: connection, after the client\'s two attempts', async () => {
    resumptions.length = 0;
    const started = Date.now();
    const outcome = await call('unreachable');
    expect(outcome).toMatchObject({ status: 'error', data: null, error: { code: 'connection' } });
    expect(outcome.error?.message).toMatch(/^MCP server 'resuming' ended its answer to tools\/call without answering it, and its resumption failed: /);
    expect(resumptions).toEqual(['ev-1', 'ev-1']);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it('a resumption that brings the answer answers the call', async () => {
    resumptions.length = 0;
    const outcome = await call('answers');
    expect(outcome).toMatchObject({ status: 'ok', data: { content: [{ type: 'text', text: 'resumed' }] } });
    expect(resumptions).toEqual(['ev-1']);
  });
});
