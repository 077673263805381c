// An MCP server's answers are read up to 8 MiB, as an http task's are (src/worker/tools/
// answer-limit.ts): a tool whose result never ends, or ends past the limit, fails the task with
// `response_too_large` at once instead of holding it (and the worker's memory) till its timeout.
// The servers are real HTTP servers speaking MCP's JSON-RPC over Streamable HTTP (JSON answers)
// and over the older HTTP+SSE transport; only their tools/call answer misbehaves.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_MAX_BYTES } from '../../../src/worker/tools/answer-limit.ts';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';

type Rpc = { id?: number; method: string; params?: { protocolVersion?: string } };
type Answer = 'endless' | 'declared' | 'large' | 'paged';

const CHUNK = Buffer.alloc(64 * 1024, 'x');

async function bodyOf(req: IncomingMessage): Promise<Rpc> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Rpc;
}

const initialized = (rpc: Rpc) => ({ jsonrpc: '2.0', id: rpc.id, result: { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } } });

/** Writes a tools/call result whose text is endless, or `bytes` long; resolves when the client went away or it ended. */
async function writeResult(res: ServerResponse, rpc: Rpc, prefix: string, answer: Answer): Promise<void> {
  const head = `${prefix}{"jsonrpc":"2.0","id":${rpc.id},"result":{"content":[{"type":"text","text":"`;
  const total = ANSWER_MAX_BYTES + CHUNK.length * 4;
  res.write(head);
  for (let sent = 0; answer === 'endless' || sent < total; sent += CHUNK.length) {
    if (res.destroyed) return;
    if (!res.write(CHUNK)) {
      // Whichever comes first; the other's listener goes with it (left waiting, one per chunk
      // piled up on the response: Node's MaxListenersExceededWarning).
      const first = new AbortController();
      const wait = (name: string) => once(res, name, { signal: first.signal }).catch(() => undefined);
      await Promise.race([wait('drain'), wait('close')]);
      first.abort();
    }
  }
  res.end(`"}]}}${prefix ? '\n\n' : ''}`);
}

let streamable: Server;
let sse: Server;
let streamableUrl: (answer: Answer) => string;
let sseUrl: string;
// Whether each endless or declared tools/call answer saw its client go away before its end.
const closedEarly: boolean[] = [];
// tools/list pages the 'paged' server answered.
let pagesServed = 0;

beforeAll(async () => {
  streamable = createServer(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const rpc = await bodyOf(req);
    const answer = new URL(req.url ?? '/', 'http://x').searchParams.get('answer') as Answer;
    if (rpc.method === 'initialize') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(initialized(rpc)));
    if (rpc.id === undefined) return void res.writeHead(202).end();
    if (answer === 'paged') {
      // A tools/list of pages of 1 MiB each, never the last: each page is within the limit.
      pagesServed++;
      const tool = { name: `t${pagesServed}`, description: 'x'.repeat(1024 * 1024), inputSchema: { type: 'object' } };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { tools: [tool], nextCursor: `p${pagesServed}` } }));
    }
    if (answer === 'declared') {
      // Says its size up front: refused before a byte of the body is read.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ANSWER_MAX_BYTES + 1) });
      res.write('{');
      await once(res, 'close');
      closedEarly.push(true);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    await writeResult(res, rpc, '', answer);
    closedEarly.push(res.destroyed);
  });
  // The older transport: a GET event stream that names where to POST, answers on the stream.
  let stream: ServerResponse | undefined;
  sse = createServer(async (req, res) => {
    if (req.method === 'GET') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: endpoint\ndata: /messages\n\n');
      return;
    }
    const rpc = await bodyOf(req);
    res.writeHead(202).end();
    if (!stream) return;
    if (rpc.method === 'initialize') stream.write(`event: message\ndata: ${JSON.stringify(initialized(rpc))}\n\n`);
    else if (rpc.method === 'tools/call') {
      await writeResult(stream, rpc, 'event: message\ndata: ', 'endless');
      closedEarly.push(stream.destroyed);
    }
  });
  for (const s of [streamable, sse]) {
    s.listen(0, '127.0.0.1');
    await once(s, 'listening');
  }
  const port = (s: Server) => (s.address() as { port: number }).port;
  streamableUrl = (answer) => `http://127.0.0.1:${port(streamable)}/mcp?answer=${answer}`;
  sseUrl = `http://127.0.0.1:${port(sse)}/sse`;
});

afterAll(async () => {
  for (const s of [streamable, sse]) {
    s?.closeAllConnections();
    await new Promise((resolve) => s?.close(resolve));
  }
});

const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(20_000), env: {} });
const call = (endpoint: string, transport = 'streamable-http') => mcp({ name: 't', kind: 'mcp', endpoint, transport, method: 'tools/call', tool: 'big' }, ctx());

describe('an MCP answer over 8 MiB', () => {
  const expectTooLarge = (outcome: Awaited<ReturnType<typeof call>>) => {
    expect(outcome.status).toBe('error');
    expect(outcome.error?.code).toBe('response_too_large');
    expect(outcome.error?.message).toContain('8 MiB');
  };

  it.each(['endless', 'declared'] as const)('a tools/call answer %s fails the task with response_too_large at once, the rest unread', async (answer) => {
    const before = closedEarly.length;
    const t0 = performance.now();
    expectTooLarge(await call(streamableUrl(answer)));
    expect(performance.now() - t0).toBeLessThan(15_000);
    await expect.poll(() => closedEarly.length, { timeout: 5_000 }).toBe(before + 1);
    expect(closedEarly.at(-1)).toBe(true);
  }, 60_000);

  it('a tools/call answer that ends past the limit fails it the same (it was read whole and returned)', async () => {
    expectTooLarge(await call(streamableUrl('large')));
  }, 60_000);

  it('a tools/list whose pages are each within the limit but together over it fails the same, the next pages not asked for', async () => {
    // Each page was bounded alone: 100 pages (the most followed) of up to 8 MiB each were held
    // in the worker's memory, to be cut from the report only after (seen: 12 pages of 1 MiB, ok).
    const outcome = await mcp({ name: 't', kind: 'mcp', endpoint: streamableUrl('paged'), transport: 'streamable-http', method: 'tools/list' }, ctx());
    expectTooLarge(outcome);
    expect(pagesServed).toBeLessThanOrEqual(ANSWER_MAX_BYTES / (1024 * 1024) + 1);
  }, 60_000);

  it("an endless answer on the SSE transport's event stream fails it the same", async () => {
    expectTooLarge(await call(sseUrl, 'sse'));
    await expect.poll(() => closedEarly.at(-1), { timeout: 5_000 }).toBe(true);
  }, 60_000);
});
