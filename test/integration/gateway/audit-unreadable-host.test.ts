// A request whose Host names no host and port (empty, as HTTP/1.1 allows for a target with no
// authority; a port out of range; a space) at a gateway without GATEWAY_PUBLIC_URL, whose origin
// is then the request's Host: 400 with a detail saying so, not a 500; public routes answer as ever.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';

let upstream: Server;
let gw: TestGateway;
beforeAll(async () => {
  upstream = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  gw = await startTestGateway({ SVC_SERVER_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
});
afterAll(async () => {
  await gw?.close();
  upstream?.closeAllConnections();
  await new Promise<void>((ok) => upstream?.close(() => ok()));
});

/** A request with exactly these headers (no Host of node's own). */
function send(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const u = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method, headers, setHost: false });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('gateway: a Host that names no host', () => {
  it('is a 400 with a detail on the API and auth routes, never a 500; /health still answers', async () => {
    const token = { authorization: `Bearer svc_${'h'.repeat(43)}` };
    for (const host of ['', '127.0.0.1:99999999', 'a b']) {
      for (const [method, path, headers] of [['GET', '/api/executions', token], ['POST', '/auth/logout', {}], ['GET', '/auth/me', {}]] as const) {
        const res = await send(method, path, { host, ...headers });
        expect(res.status, `${method} ${path} Host ${JSON.stringify(host)}`).toBe(400);
        expect(res.body).toEqual({ detail: `the Host header (${JSON.stringify(host)}) names no host and port; send this gateway's own name (or set GATEWAY_PUBLIC_URL)` });
      }
      expect(await send('GET', '/health', { host })).toEqual({ status: 200, body: 'ok' });
    }
    expect(gw.logs.join('\n')).not.toContain('Invalid URL');
  });
});
