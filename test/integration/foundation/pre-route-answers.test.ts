// Answers given before any route runs (node's HTTP parser, fastify's router) carry the shape of
// every other error, `{"detail": {code, message}}` with a code of the registry
// (machines/error-codes.ts), and the headers every answer carries. Sent over a raw socket: a
// client library would refuse to send (or would re-encode) what these requests hold. And a name
// in a URL longer than its registration takes is refused naming it and its limit, not "not found".
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PARAM_CHARS } from '../../../src/body-limit.ts';
import { MAX_PATH_CHARS } from '../../../src/api/catalog-path.ts';
import { MAX_CREDENTIAL_REFERENCE_CHARS as MAX_CREDENTIAL_NAME_CHARS } from '../../../src/dsl/credential-reference.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

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

describe('over-long names in a URL', () => {
  const refused = (field: string, limit: number) =>
    expect.objectContaining({ message: expect.any(String), errors: [expect.stringMatching(new RegExp(`^${field}: must be at most ${limit} characters`))] });

  it('a catalog path over what a registration takes: 422 naming path and its limit, the statechart and versions reads too', async () => {
    for (const path of [`/api/catalog/playbook/${'a'.repeat(2000)}`, `/api/catalog/playbook/x/${'a'.repeat(MAX_PATH_CHARS)}/versions`, `/api/catalog/playbook/${'a'.repeat(MAX_PATH_CHARS + 1)}/statechart`]) {
      const r = await http(app.url, 'GET', path);
      expect(r.status, path.slice(-30)).toBe(422);
      expect(r.body.detail, path.slice(-30)).toEqual(refused('path', MAX_PATH_CHARS));
      expect(r.body.detail.code).toBe('unprocessable');
    }
    // At the limit it may name an entry: not there, 404.
    expect((await http(app.url, 'GET', `/api/catalog/playbook/${'a'.repeat(MAX_PATH_CHARS)}`)).status).toBe(404);
    expect((await http(app.url, 'GET', `/api/catalog/playbook/${'a'.repeat(MAX_PATH_CHARS)}/versions`)).status).toBe(404);
  });

  it('a credential name over what a registration takes: 422 naming the parameter and its limit, as the registration refuses it', async () => {
    const name = 'n'.repeat(300);
    const read = await http(app.url, 'GET', `/api/credentials/${name}`);
    expect(read.status).toBe(422);
    expect(read.body.detail).toEqual(refused('name', MAX_CREDENTIAL_NAME_CHARS));
    for (const [method, path] of [['DELETE', `/api/credentials/${name}`], ['PUT', `/api/credentials/${name}`], ['POST', `/api/credentials/${name}/test`]]) {
      const r = await http(app.url, method, path, method === 'DELETE' ? undefined : { data: {} });
      expect(r.status, `${method} ${path.slice(-10)}`).toBe(422);
      expect(r.body.detail.errors, `${method} ${path.slice(-10)}`).toContainEqual(expect.stringMatching(new RegExp(`^name: must be at most ${MAX_CREDENTIAL_NAME_CHARS} characters`)));
    }
    const register = await http(app.url, 'POST', '/api/credentials', { name, type: 'bearer', data: { token: 't' } });
    expect(register.status).toBe(422);
    expect(register.body.detail.errors).toContainEqual(expect.stringMatching(new RegExp(`^name: must be at most ${MAX_CREDENTIAL_NAME_CHARS} characters`)));
    expect((await http(app.url, 'GET', `/api/credentials/${'n'.repeat(MAX_CREDENTIAL_NAME_CHARS)}`)).status).toBe(404);
  });

  it('a path parameter beyond the router\'s limit: 414 uri_too_long with the limit', async () => {
    const r = await http(app.url, 'GET', `/api/credentials/${'n'.repeat(MAX_PARAM_CHARS + 1)}`);
    expect(r.status).toBe(414);
    expect(r.body).toEqual({ detail: { code: 'uri_too_long', message: expect.stringContaining(`over ${MAX_PARAM_CHARS} characters`), limit: MAX_PARAM_CHARS } });
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
