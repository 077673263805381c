// Answers given before any route runs (node's HTTP parser, fastify's router) carry the shape of
// every other error, `{"detail": {code, message}}` with a code of the registry
// (machines/error-codes.ts), and the headers every answer carries. Sent over a raw socket: a
// client library would refuse to send (or would re-encode) what these requests hold.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

type RawAnswer = { status: number; headers: Map<string, string>; body: unknown };

/** Writes `request` as is to the server and reads the answer until the server closes or answers in full. */
function raw(url: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (e) => (chunks.length ? undefined : reject(e)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const body = rest.join('\r\n\r\n');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined });
    });
    socket.write(request);
  });
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n`;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe('answers given before any route', () => {
  it('431 for headers over 16 KiB: detail.code headers_too_large, JSON, the headers every answer has', async () => {
    const r = await raw(app.url, get('/api/health', `X-Pad: ${'x'.repeat(17 * 1024)}\r\n`));
    expect(r.status).toBe(431);
    expect(r.body).toEqual({ detail: { code: 'headers_too_large', message: 'the request headers are over 16 KiB together' } });
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('connection')).toBe('close');
  });

  it('400 for a path whose percent-encoding is not UTF-8: detail.code bad_request', async () => {
    for (const path of ['/api/catalog/%FF', '/api/hooks/a/%C3%28']) {
      const r = await raw(app.url, get(path));
      expect(r.status, path).toBe(400);
      expect(r.body, path).toEqual({ detail: { code: 'bad_request', message: expect.stringContaining('is not a valid url component') } });
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('400 for bytes that are not HTTP: detail.code bad_request', async () => {
    const r = await raw(app.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ detail: { code: 'bad_request', message: 'the request is not valid HTTP' } });
  });

  it('the server still answers on other connections', async () => {
    const r = await raw(app.url, get('/api/health'));
    expect(r.status).toBe(200);
  });
});
