import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';

let server: TestMcpServer;
let sseServer: TestMcpServer;
let target: HttpTarget;
beforeAll(async () => {
  [server, sseServer, target] = await Promise.all([startMcpServer(), startMcpServer({ transport: 'sse' }), startHttpTarget()]);
});
afterAll(async () => Promise.all([server?.close(), sseServer?.close(), target?.close()]));

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ signal: new AbortController().signal, env: {}, ...extra });
// The test servers listen on loopback: the worker's own token may go there only when listed.
const LOCAL_TOKEN_HOST = { SVC_MCP_TOKEN_HOSTS: '127.0.0.1' };
const task = (fields: Record<string, unknown>) => ({ name: 't', kind: 'mcp', server: 'test', endpoint: server.url, ...fields });

async function closedPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  await new Promise((resolve) => probe.close(resolve));
  return address.port;
}

describe('mcp tool', () => {
  it('lists the tools of a Streamable HTTP server', async () => {
    const outcome = await mcp(task({ method: 'tools/list' }), ctx());
    expect(outcome.status).toBe('ok');
    expect(outcome.data).toMatchObject({ tools: expect.arrayContaining([expect.objectContaining({ name: 'echo' }), expect.objectContaining({ name: 'add' })]) });
  });

  it('calls add and returns the protocol result', async () => {
    const outcome = await mcp(task({ method: 'tools/call', tool: 'add', arguments: { a: 2, b: 40 } }), ctx());
    expect(outcome).toEqual({ status: 'ok', data: expect.objectContaining({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } }) });
  });

  it('turns an isError result into a tool_error outcome that keeps the result', async () => {
    const outcome = await mcp(task({ method: 'tools/call', tool: 'fail' }), ctx());
    expect(outcome).toEqual({
      status: 'error',
      data: expect.objectContaining({ isError: true, content: [{ type: 'text', text: 'the tool failed on purpose' }] }),
      error: { code: 'tool_error', message: "MCP tool 'fail' returned an error: the tool failed on purpose" },
    });
  });

  it('reports an unknown tool as an mcp_error', async () => {
    const outcome = await mcp(task({ method: 'tools/call', tool: 'nope' }), ctx());
    expect(outcome.status).toBe('error');
    // The SDK reports an unknown tool either as a JSON-RPC error or as an isError result.
    expect(['mcp_error', 'tool_error']).toContain(outcome.error?.code);
    expect(outcome.error?.message).toContain('nope');
  });

  it('reports an unreachable endpoint as a connection error', async () => {
    const port = await closedPort();
    const outcome = await mcp(task({ method: 'tools/list', endpoint: `http://127.0.0.1:${port}/mcp` }), ctx());
    expect(outcome).toMatchObject({ status: 'error', data: null, error: { code: 'connection' } });
    expect(outcome.error?.message).toContain(`cannot connect to MCP server 'test' at http://127.0.0.1:${port}/mcp: ECONNREFUSED`);
  });

  it('names both transports when neither serves the path (404 to both: answered, mcp_error)', async () => {
    const outcome = await mcp(task({ method: 'tools/list', endpoint: server.url.replace('/mcp', '/elsewhere') }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'mcp_error' } });
    expect(outcome.error?.message).toMatch(/answered initialize with HTTP 404 \(Streamable HTTP\), then over the SSE fallback HTTP 404/);
  });

  it('falls back to the SSE transport when Streamable HTTP answers 405', async () => {
    const outcome = await mcp(task({ method: 'tools/call', endpoint: sseServer.url, tool: 'echo', arguments: { text: 'over sse' } }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { content: [{ type: 'text', text: 'over sse' }] } });
  });

  it('returns a timeout outcome when the signal aborts a slow call', async () => {
    const started = Date.now();
    const outcome = await mcp(task({ method: 'tools/call', tool: 'slow', arguments: { ms: 5000 } }), ctx({ signal: AbortSignal.timeout(300) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('speaks only the transport a server is registered with', async () => {
    const before = sseServer.authorizations.length;
    const direct = await mcp(task({ method: 'tools/list', endpoint: sseServer.url, transport: 'sse' }), ctx());
    expect(direct.status).toBe('ok');
    // Straight to SSE: the GET that opens the stream comes first, no Streamable HTTP POST before it.
    expect(sseServer.authorizations.length - before).toBeGreaterThan(0);
    const strict = await mcp(task({ method: 'tools/list', endpoint: sseServer.url, transport: 'streamable-http' }), ctx());
    // Its 405 to the POST is an answer: mcp_error (test/integration/tools/audit-mcp-answered-initialize).
    expect(strict).toMatchObject({ status: 'error', error: { code: 'mcp_error', message: expect.stringContaining('answered initialize with HTTP 405') } });
    expect(strict.error?.message).not.toContain('SSE fallback');
    expect(await mcp(task({ method: 'tools/list', transport: 'carrier-pigeon' }), ctx())).toMatchObject({ error: { code: 'invalid_task', message: expect.stringContaining('transport') } });
  });

  it('rejects bad fields without throwing', async () => {
    expect(await mcp(task({ method: 'tools/call' }), ctx())).toMatchObject({ error: { code: 'invalid_task', message: 'invalid mcp task: tool: required for tools/call' } });
    expect(await mcp(task({ method: 'resources/list' }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
    expect(await mcp(task({ method: 'tools/list', endpoint: 'nowhere' }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
  });

  describe('bearer token resolution', () => {
    const lastAuthorization = () => server.authorizations.at(-1);

    it('prefers the task access_token (workload.access_token) over everything', async () => {
      const credential = { name: 'mcp_auth', type: 'bearer', data: { token: 'from-credential' } };
      await mcp(task({ method: 'tools/list', access_token: 'from-workload' }), ctx({ credential, env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'from-env' } }));
      expect(lastAuthorization()).toBe('Bearer from-workload');
    });

    it('uses the task credential before the worker environment', async () => {
      const credential = { name: 'mcp_auth', type: 'bearer', data: { token: 'from-credential' } };
      await mcp(task({ method: 'tools/list' }), ctx({ credential, env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'from-env' } }));
      expect(lastAuthorization()).toBe('Bearer from-credential');
    });

    it('falls back to GOOGLE_OAUTH_ACCESS_TOKEN', async () => {
      await mcp(task({ method: 'tools/list' }), ctx({ env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'from-env', ...LOCAL_TOKEN_HOST } }));
      expect(lastAuthorization()).toBe('Bearer from-env');
    });

    it("sends the worker's own token (environment, metadata service) only to hosts of SVC_MCP_TOKEN_HOSTS", async () => {
      let metadataAsked = 0;
      const metadata = await startHttpTarget((_req, res) => {
        metadataAsked++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'from-metadata' }));
      });
      try {
        // A playbook's endpoint on a host nobody listed: by default only googleapis.com is.
        for (const env of [{ GOOGLE_OAUTH_ACCESS_TOKEN: 'from-env' }, { SVC_MCP_METADATA_URL: `${metadata.url}/token` }, { GOOGLE_OAUTH_ACCESS_TOKEN: 'from-env', SVC_MCP_TOKEN_HOSTS: 'googleapis.com, 127.0.0.10' }]) {
          const outcome = await mcp(task({ method: 'tools/list' }), ctx({ env }));
          expect(outcome.status).toBe('ok');
          expect(lastAuthorization()).toBeUndefined();
        }
        expect(metadataAsked).toBe(0);
        // The workload's token and the task's credential are the playbook's own: they go anywhere.
        await mcp(task({ method: 'tools/list', access_token: 'from-workload' }), ctx({ env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'from-env' } }));
        expect(lastAuthorization()).toBe('Bearer from-workload');
      } finally {
        await metadata.close();
      }
    });

    it('asks the metadata service only when SVC_MCP_METADATA_URL is set', async () => {
      await mcp(task({ method: 'tools/list' }), ctx());
      expect(lastAuthorization()).toBeUndefined();

      const metadata = await startHttpTarget((req, res) => {
        if (req.headers['metadata-flavor'] !== 'Google') res.writeHead(403).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'from-metadata', expires_in: 3599 }));
      });
      try {
        const outcome = await mcp(task({ method: 'tools/list' }), ctx({ env: { SVC_MCP_METADATA_URL: `${metadata.url}/token`, ...LOCAL_TOKEN_HOST } }));
        expect(outcome.status).toBe('ok');
        expect(lastAuthorization()).toBe('Bearer from-metadata');
        expect(metadata.requests).toHaveLength(1);
      } finally {
        await metadata.close();
      }
    });

    it('reports a failing metadata service as an auth error', async () => {
      const outcome = await mcp(task({ method: 'tools/list' }), ctx({ env: { SVC_MCP_METADATA_URL: `${target.url}/status/500`, ...LOCAL_TOKEN_HOST } }));
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'auth', message: 'MCP access token from the metadata service failed: HTTP 500' } });
    });
  });
});
