// A client that asks `Expect: 100-continue` before its body (curl does for any body over 1 KiB):
// the gateway answers the expectation itself, reads the body, and the server gets the request
// as any other, without the header (the proxy cannot send it on, and it has nothing left to ask).
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';

const TOKEN = 'svc_' + 'e'.repeat(43);

let upstream: Server;
let gw: TestGateway;
const seen: { headers: IncomingMessage['headers']; bytes: number }[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, bytes: Buffer.concat(chunks).length });
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success' }));
    });
  });
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  gw = await startTestGateway({ SVC_SERVER_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
});
afterAll(async () => {
  await gw?.close();
  upstream?.closeAllConnections();
  await new Promise<void>((ok) => upstream?.close(() => ok()));
});

/** POSTs `body` as curl does: headers with `Expect: 100-continue`, the body once the 100 came. */
function postExpectingContinue(url: string, body: string): Promise<{ status: number; continued: boolean; text: string }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' } });
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, continued, text }));
    });
    req.on('error', reject);
  });
}

describe('gateway: Expect: 100-continue', () => {
  it('passes a body sent after 100 Continue on to the server (not 502), without the Expect header', async () => {
    const body = JSON.stringify({ path: 'big/one', content: 'x'.repeat(4096) });
    const res = await postExpectingContinue(`${gw.url}/api/catalog/playbook`, body);
    expect(res).toEqual({ status: 201, continued: true, text: JSON.stringify({ status: 'success' }) });
    expect(seen.at(-1)?.bytes).toBe(Buffer.byteLength(body));
    expect(seen.at(-1)?.headers.expect).toBeUndefined();
  });
});
