// The gateway's edge behaviour against a real upstream HTTP server of the test's own (so the
// stream's timing and the upstream's view of each request can be observed): server-sent events
// flow unbuffered and a client that leaves closes the upstream request; CORS preflights for
// allowed and refused origins; rate limits (429 + Retry-After); request size limits; no OpenID
// provider means API tokens only; runtime settings for the GUI.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyIdentity } from '../../../src/auth/identity-assertion.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

const ALLOWED = 'https://gui.example.test';
const TOKEN = 'svc_' + 'k'.repeat(43);
const auth = { authorization: `Bearer ${TOKEN}` };

let upstream: Server;
let upstreamUrl: string;
const seen: IncomingMessage[] = [];
let streamClosed = false;
let releaseSecond: () => void = () => {};

function handle(req: IncomingMessage, res: ServerResponse): void {
  seen.push(req);
  if (req.url === '/api/stream') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('event: status\ndata: {"n":1}\n\n');
    const second = new Promise<void>((ok) => (releaseSecond = ok));
    void second.then(() => res.write('event: status\ndata: {"n":2}\n\n'));
    req.on('close', () => (streamClosed = true));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'upstream=1' });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, bytes: Buffer.concat(chunks).length }));
  });
}

let gw: TestGateway;
let guiDir: string;
beforeAll(async () => {
  upstream = createServer(handle);
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  guiDir = await mkdtemp(join(tmpdir(), 'svc-gui-'));
  await writeFile(join(guiDir, 'index.html'), '<!doctype html><title>svc gui</title>');
  await mkdir(join(guiDir, 'assets'));
  await writeFile(join(guiDir, 'assets', 'app-1a2b.js'), 'console.log("svc gui")');
  gw = await startTestGateway(
    { SVC_SERVER_URL: upstreamUrl, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, CORS_ALLOWED_ORIGINS: ALLOWED, SVC_GATEWAY_RATE_LIMIT_PER_MINUTE: '40', SVC_GATEWAY_AUTH_RATE_LIMIT_PER_MINUTE: '3', SVC_BATCH_MAX_BYTES: '1024' },
    0,
    guiDir,
  );
});
afterAll(async () => {
  await gw?.close();
  upstream?.closeAllConnections();
  await new Promise<void>((ok) => upstream?.close(() => ok()));
});

describe('gateway: server-sent events', () => {
  it('streams each message as it comes, and closes the upstream request when the client leaves', async () => {
    const leave = new AbortController();
    const res = await fetch(`${gw.url}/api/stream`, { headers: auth, signal: leave.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('data: {"n":1}'); // arrived while the upstream still holds the stream open
    releaseSecond();
    const second = new TextDecoder().decode((await reader.read()).value);
    expect(second).toContain('data: {"n":2}');
    expect(streamClosed).toBe(false);
    leave.abort();
    await until('the upstream request closes', () => streamClosed, 5_000);
  });
});

describe('gateway: what reaches the server', () => {
  it('passes an API token as is, drops the client\'s identity header and cookies, and the server\'s cookies', async () => {
    const res = await http(gw.url, 'POST', '/api/echo?x=1', { a: 1 }, { ...auth, 'x-svc-identity': 'forged.value', cookie: 'svc_session=abc; other=1', 'x-forwarded-for': '10.9.9.9' });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe('/api/echo?x=1');
    expect(res.body.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(res.body.headers['x-svc-identity']).toBeUndefined();
    expect(res.body.headers.cookie).toBeUndefined();
    expect(res.body.headers['x-forwarded-for']).toBe('127.0.0.1'); // the client's own claim is not believed
    expect(res.body.bytes).toBe(7);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(verifyIdentity(res.body.headers['x-svc-identity'], TEST_GATEWAY_SECRET, 'POST /api/echo?x=1').ok).toBe(false);
  });

  it('passes every copy of a repeated header as sent (a webhook\'s bearer signature refuses two Authorization lines)', async () => {
    const answer = await new Promise<{ rawHeaders: string[] }>((ok, fail) => {
      const req = request(`${gw.url}/api/hooks/some/path`, { method: 'POST', headers: ['host', new URL(gw.url).host, 'authorization', 'Bearer right', 'authorization', 'Bearer wrong', 'x-sig', 'a', 'x-sig', 'b', 'content-type', 'application/json', 'content-length', '2'] }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { url: string };
          const last = seen.at(-1);
          if (!last || body.url !== '/api/hooks/some/path') fail(new Error('the hook did not reach the server'));
          else ok({ rawHeaders: last.rawHeaders });
        });
      });
      req.on('error', fail);
      req.end('{}');
    });
    const copies = (name: string) => answer.rawHeaders.filter((_, i) => i % 2 === 1 && answer.rawHeaders[i - 1].toLowerCase() === name);
    expect(copies('authorization')).toEqual(['Bearer right', 'Bearer wrong']);
    expect(copies('x-sig')).toEqual(['a', 'b']);
  });

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    const behind = await startTestGateway({ SVC_SERVER_URL: upstreamUrl, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_GATEWAY_TRUSTED_PROXIES: '127.0.0.1' });
    try {
      const res = await http(behind.url, 'GET', '/api/echo', undefined, { ...auth, 'x-forwarded-for': '10.9.9.9' });
      expect(res.body.headers['x-forwarded-for']).toBe('10.9.9.9');
    } finally {
      await behind.close();
    }
  });

  it('without an OpenID provider refuses bearer JWTs and login, and says so', async () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
    const res = await http(gw.url, 'GET', '/api/echo', undefined, { authorization: `Bearer ${jwt}` });
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain('no identity provider');
    expect((await http(gw.url, 'GET', '/auth/me')).status).toBe(401);
    expect(gw.logs.join('\n')).toContain('no SVC_OIDC_ISSUER');
    expect((await http(gw.url, 'GET', '/ready')).body).toEqual({ ready: true, upstream: 'reachable', identity_provider: 'not configured', sessions: 'not used' });
  });

  it('refuses a body over the server\'s size limit with 413 before the server sees it', async () => {
    const before = seen.length;
    const res = await http(gw.url, 'POST', '/api/echo', 'x'.repeat(9 * 1024 * 1024), { ...auth, 'content-type': 'text/plain' });
    expect(res.status).toBe(413);
    expect(Object.keys(res.body)).toEqual(['detail']);
    expect(seen.length).toBe(before);
  });
});

describe('gateway: CORS', () => {
  it('answers a preflight from an allowed origin with that origin, credentials and Vary: Origin', async () => {
    const res = await fetch(`${gw.url}/api/executions`, { method: 'OPTIONS', headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  it('gives a preflight from any other origin no allow-origin', async () => {
    for (const origin of ['https://evil.example.test', 'https://gui.example.test.evil.test', 'null']) {
      const res = await fetch(`${gw.url}/api/executions`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(res.status, origin).toBe(403);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });

  it('marks actual answers to allowed origins only', async () => {
    const ok = await fetch(`${gw.url}/api/echo`, { headers: { ...auth, origin: ALLOWED } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    // A page there can read when to try again and where a created thing is (not CORS-safelisted).
    expect(ok.headers.get('access-control-expose-headers')).toBe('Retry-After, Location, Idempotent-Replayed');
    const other = await fetch(`${gw.url}/api/echo`, { headers: { ...auth, origin: 'https://evil.example.test' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('gateway: GUI', () => {
  it('serves runtime settings that never let the GUI skip authentication, and the GUI at /', async () => {
    const cfg = await http(gw.url, 'GET', '/runtime-config.json');
    expect(cfg.status).toBe(200);
    expect(cfg.body).toEqual({ auth: 'gateway', api_base: '/api', login_url: null, logout_url: null, me_url: '/auth/me', allow_skip_auth: false });
    const page = await fetch(`${gw.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('svc gui');
    // The same files, types and cache rules as the server's /ui/ (one helper serves both).
    const asset = await fetch(`${gw.url}/assets/app-1a2b.js`);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${gw.url}/assets/missing.js`)).status).toBe(404);
    // A link into the app by another path still opens the app.
    expect(await (await fetch(`${gw.url}/executions`)).text()).toContain('svc gui');
  });
});

describe('gateway: rate limits', () => {
  it('answers 429 with Retry-After past the limit, per identity and per address', async () => {
    // The auth routes: 3 a minute per address.
    const auths = [];
    for (let i = 0; i < 4; i++) auths.push(await http(gw.url, 'GET', '/auth/login'));
    expect(auths.slice(0, 3).map((r) => r.status)).toEqual([404, 404, 404]);
    expect(auths[3].status).toBe(429);
    expect(Number(auths[3].headers.get('retry-after'))).toBeGreaterThan(0);
    // The API: 40 a minute per identity; another identity still gets in.
    const other = { authorization: `Bearer svc_${'m'.repeat(43)}` };
    let last = 0;
    let retryAfter: string | null = null;
    for (let i = 0; i < 45 && last !== 429; i++) {
      const res = await fetch(`${gw.url}/api/echo`, { headers: auth });
      last = res.status;
      retryAfter = res.headers.get('retry-after');
      await res.text();
    }
    expect(last).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect((await http(gw.url, 'GET', '/api/echo', undefined, other)).status).toBe(200);
    const limited = await http(gw.url, 'GET', '/api/echo', undefined, auth);
    expect(Object.keys(limited.body)).toEqual(['detail']);
    expect(gw.logs.join('\n').includes(TOKEN)).toBe(false);
  });
});
