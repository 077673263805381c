import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import type { ResolvedCredential } from '../../../src/protocol.ts';
import type { TaskOutcome, ToolContext } from '../../../src/worker/tools/types.ts';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

let target: HttpTarget;
beforeAll(async () => {
  target = await startHttpTarget();
});
afterAll(async () => target?.close());

// A port that was just free: nothing listens there, so a connection is refused.
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  await new Promise((resolve) => server.close(resolve));
  return address.port;
}

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ signal: new AbortController().signal, env: {}, ...extra });
const task = (fields: Record<string, unknown>) => ({ name: 't', kind: 'http', ...fields });

// The echo route answers {method, path, query, headers, body}; this reads it back without casts.
function echoed(outcome: TaskOutcome): { method: string; query: Record<string, unknown>; headers: Record<string, unknown>; body: unknown } {
  expect(outcome.status).toBe('ok');
  const data = outcome.data;
  if (typeof data !== 'object' || data === null || !('body' in data)) throw new Error('no body in outcome');
  const body = data.body;
  if (typeof body !== 'object' || body === null) throw new Error('echo body is not an object');
  return {
    method: 'method' in body && typeof body.method === 'string' ? body.method : '',
    query: 'query' in body && typeof body.query === 'object' && body.query !== null ? { ...body.query } : {},
    headers: 'headers' in body && typeof body.headers === 'object' && body.headers !== null ? { ...body.headers } : {},
    body: 'body' in body ? body.body : undefined,
  };
}

describe('http tool', () => {
  it('GETs with params merged into the query string and parses a JSON answer', async () => {
    const outcome = await http(task({ url: `${target.url}/echo?a=1`, params: { b: 2, c: ['x', 'y'], skip: null } }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { status: 200, headers: { 'content-type': 'application/json' } } });
    const echo = echoed(outcome);
    expect(echo.method).toBe('GET');
    expect(echo.query).toEqual({ a: '1', b: '2', c: ['x', 'y'] });
  });

  it('POSTs an object body as JSON with its content type, and a string body as is', async () => {
    const json = echoed(await http(task({ method: 'post', url: `${target.url}/echo`, body: { id: 7, tags: ['a'] } }), ctx()));
    expect(json.method).toBe('POST');
    expect(json.headers['content-type']).toBe('application/json');
    expect(json.body).toEqual({ id: 7, tags: ['a'] });

    const text = echoed(await http(task({ method: 'PUT', url: `${target.url}/echo`, headers: { 'content-type': 'text/plain' }, body: 'raw {{ text }}' }), ctx()));
    expect(text.body).toBe('raw {{ text }}');
  });

  it('keeps a non-JSON answer as text', async () => {
    const outcome = await http(task({ url: `${target.url}/text` }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { status: 200, body: 'hello' } });
  });

  it('reads no more than 8 MiB of an answer: an endless or declared larger body is response_too_large; a split UTF-8 character reads whole', async () => {
    let written = 0;
    const server = createServer((req, res) => {
      if (req.url === '/endless') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        const more = () => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
          if (!res.destroyed) res.once('drain', more);
        };
        more();
      } else if (req.url === '/declared') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(100 * 1024 * 1024) });
        res.write('x');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        const e = Buffer.from('é');
        res.write(e.subarray(0, 1));
        setTimeout(() => res.end(e.subarray(1)), 20);
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const base = `http://127.0.0.1:${address.port}`;
    try {
      const endless = await http(task({ url: `${base}/endless` }), ctx());
      expect(endless).toMatchObject({ status: 'error', error: { code: 'response_too_large', message: expect.stringMatching(/over 8 MiB/) } });
      // It stopped reading: the server wrote little more than the limit (its socket buffers) before the close.
      expect(written).toBeLessThan(16 * 1024 * 1024);
      expect(await http(task({ url: `${base}/declared` }), ctx())).toMatchObject({ status: 'error', error: { code: 'response_too_large' } });
      expect(await http(task({ url: `${base}/split` }), ctx())).toMatchObject({ status: 'ok', data: { body: 'é' } });
      // An oauth2 token endpoint's answer is read no further either.
      const credential: ResolvedCredential = { name: 'oauth_endless', type: 'oauth2', data: { token_url: `${base}/endless`, client_id: 'c', client_secret: 's' } };
      expect(await http(task({ url: `${base}/split` }), ctx({ credential }))).toMatchObject({ status: 'error', error: { code: 'auth', message: expect.stringMatching(/over 8 MiB/) } });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reports a 404 as an http_status error that still carries the response', async () => {
    const outcome = await http(task({ url: `${target.url}/status/404` }), ctx());
    expect(outcome).toEqual({
      status: 'error',
      data: expect.objectContaining({ status: 404, body: { status: 404 } }),
      error: { code: 'http_status', message: 'HTTP 404 Not Found' },
    });
  });

  it('accepts a listed status as success', async () => {
    const outcome = await http(task({ url: `${target.url}/status/404`, accept_status: [404, '409'] }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { status: 404 } });
  });

  it('returns a timeout outcome when the signal aborts mid-request', async () => {
    const started = Date.now();
    const outcome = await http(task({ url: `${target.url}/delay/5000` }), ctx({ signal: AbortSignal.timeout(150) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout', message: 'task timed out' } });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports an unreachable target as a connection error', async () => {
    const port = await closedPort();
    const outcome = await http(task({ url: `http://127.0.0.1:${port}/x?key=hidden` }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
    expect(outcome.error?.message).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/x failed: ECONNREFUSED`));
    expect(outcome.error?.message).not.toContain('hidden');
  });

  it('rejects bad fields with invalid_task without throwing', async () => {
    expect(await http(task({ url: 'not a url' }), ctx())).toMatchObject({ status: 'error', error: { code: 'invalid_task' } });
    expect(await http(task({ url: `${target.url}/echo`, method: 'FETCH' }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
    expect(await http(task({ url: `${target.url}/echo`, body: { a: 1 } }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
    expect(await http(task({ url: 'ftp://example.com/' }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
  });

  describe('credentials', () => {
    const withCredential = (type: string, data: Record<string, unknown>) => ctx({ credential: { name: `${type}_auth`, type, data } });

    it('applies a bearer token', async () => {
      const echo = echoed(await http(task({ url: `${target.url}/echo` }), withCredential('bearer', { token: 'tok-123' })));
      expect(echo.headers.authorization).toBe('Bearer tok-123');
      const viaAccessToken = echoed(await http(task({ url: `${target.url}/echo` }), withCredential('bearer', { access_token: 'tok-456' })));
      expect(viaAccessToken.headers.authorization).toBe('Bearer tok-456');
    });

    it('applies basic auth', async () => {
      const echo = echoed(await http(task({ url: `${target.url}/echo` }), withCredential('basic', { username: 'ann', password: 'pw:1' })));
      expect(echo.headers.authorization).toBe(`Basic ${Buffer.from('ann:pw:1').toString('base64')}`);
    });

    it('applies an api key in the default header, a named header, or the query', async () => {
      const byDefault = echoed(await http(task({ url: `${target.url}/echo` }), withCredential('api_key', { key: 'k1' })));
      expect(byDefault.headers['x-api-key']).toBe('k1');
      const named = echoed(await http(task({ url: `${target.url}/echo` }), withCredential('api_key', { api_key: 'k2', header: 'X-Token' })));
      expect(named.headers['x-token']).toBe('k2');
      const inQuery = echoed(await http(task({ url: `${target.url}/echo?q=1` }), withCredential('api_key', { value: 'k3', in: 'query', param: 'apikey' })));
      expect(inQuery.query).toEqual({ q: '1', apikey: 'k3' });
      expect(inQuery.headers['x-api-key']).toBeUndefined();
    });

    it('lets an explicit Authorization header of the task win over the credential', async () => {
      const echo = echoed(await http(task({ url: `${target.url}/echo`, headers: { authorization: 'Bearer from-task' } }), withCredential('bearer', { token: 'from-cred' })));
      expect(echo.headers.authorization).toBe('Bearer from-task');
    });

    it('rejects a credential it cannot apply, naming no data', async () => {
      const outcome = await http(task({ url: `${target.url}/echo` }), withCredential('bearer', { nope: 'x' }));
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_credential' } });
      const wrongType = await http(task({ url: `${target.url}/echo` }), withCredential('postgres', { password: 'pw' }));
      expect(wrongType).toMatchObject({ status: 'error', error: { code: 'invalid_credential' } });
    });

    it('fetches an oauth2 client-credentials token once and reuses it', async () => {
      const credential: ResolvedCredential = {
        name: `oauth_${Math.random().toString(36).slice(2)}`,
        type: 'oauth2',
        data: { token_url: `${target.url}/token`, client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, scope: 'read' },
      };
      const before = target.requests.filter((r) => r.path === '/token').length;
      const first = await http(task({ url: `${target.url}/protected` }), ctx({ credential }));
      const second = await http(task({ url: `${target.url}/protected` }), ctx({ credential }));
      expect(first).toMatchObject({ status: 'ok', data: { status: 200, body: { ok: true } } });
      expect(second).toMatchObject({ status: 'ok', data: { status: 200 } });
      const tokenCalls = target.requests.filter((r) => r.path === '/token').slice(before);
      expect(tokenCalls).toHaveLength(1);
      expect(new URLSearchParams(tokenCalls[0].body).get('grant_type')).toBe('client_credentials');
      expect(new URLSearchParams(tokenCalls[0].body).get('scope')).toBe('read');
    });

    it('shares one token request between concurrent tasks, and refetches after expiry', async () => {
      const credential: ResolvedCredential = {
        name: `oauth_${Math.random().toString(36).slice(2)}`,
        type: 'oauth2',
        data: { token_url: `${target.url}/token?expires_in=1`, client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET },
      };
      const before = target.requests.filter((r) => r.path === '/token').length;
      const outcomes = await Promise.all([1, 2, 3].map(() => http(task({ url: `${target.url}/protected` }), ctx({ credential }))));
      expect(outcomes.every((o) => o.status === 'ok')).toBe(true);
      expect(target.requests.filter((r) => r.path === '/token').length - before).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await http(task({ url: `${target.url}/protected` }), ctx({ credential }))).toMatchObject({ status: 'ok' });
      expect(target.requests.filter((r) => r.path === '/token').length - before).toBe(2);
    });

    it('reports a failing token endpoint as an auth error', async () => {
      const credential: ResolvedCredential = {
        name: `oauth_${Math.random().toString(36).slice(2)}`,
        type: 'oauth2',
        data: { token_url: `${target.url}/token`, client_id: DEFAULT_CLIENT_ID, client_secret: 'wrong-secret' },
      };
      const outcome = await http(task({ url: `${target.url}/protected` }), ctx({ credential }));
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'auth', message: `oauth2 token request for credential '${credential.name}' failed: HTTP 401 Unauthorized` } });
    });
  });
});
