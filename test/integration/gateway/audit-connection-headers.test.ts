// Headers a Connection header names are hop-by-hop (RFC 9110 7.6.1: a proxy removes them before
// it forwards the message), both ways: what the client marked so never reaches the server, and
// what the server marked so never reaches the client.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';

const TOKEN = 'svc_' + 'c'.repeat(43);

let upstream: Server;
let gw: TestGateway;
const seen: IncomingMessage['headers'][] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-upstream-hop', 'x-upstream-hop': 'server-to-gateway', 'x-upstream-kept': 'yes' });
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

/** A GET with exactly these headers (fetch would refuse to send Connection). */
function get(path: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.url}${path}`, { headers });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('gateway: headers the Connection header names', () => {
  it('are dropped both ways; other headers pass', async () => {
    const res = await get('/api/executions', { authorization: `Bearer ${TOKEN}`, connection: 'keep-alive, X-Client-Hop', 'x-client-hop': 'client-to-gateway', 'x-client-kept': 'yes' });
    expect(res.statusCode).toBe(200);
    const headers = seen.at(-1);
    expect(headers?.['x-client-hop']).toBeUndefined();
    expect(headers?.['x-client-kept']).toBe('yes');
    expect(headers?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(res.headers['x-upstream-hop']).toBeUndefined();
    expect(res.headers['x-upstream-kept']).toBe('yes');
  });
});
