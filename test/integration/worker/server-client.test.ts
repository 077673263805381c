import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerClient, ServerError } from '../../../src/worker/server-client.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

function portOf(server: Server): number {
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('server is not listening on a port');
  return address.port;
}

type Raw = { url: string; requests: number; connections: number; close(): Promise<void> };

/** A bare HTTP server whose handler sees each request with its number on its connection. */
async function rawServer(handle: (req: IncomingMessage, res: ServerResponse, nthOnSocket: number) => void): Promise<Raw> {
  const perSocket = new WeakMap<Socket, number>();
  const raw = { url: '', requests: 0, connections: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    raw.requests++;
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    handle(req, res, n);
  });
  server.on('connection', () => raw.connections++);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  raw.url = `http://127.0.0.1:${portOf(server)}`;
  raw.close = () => {
    server.closeAllConnections();
    return new Promise((ok) => server.close(() => ok()));
  };
  return raw;
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = portOf(s);
  await new Promise((ok) => s.close(ok));
  return port;
}

describe('ServerClient', () => {
  it('sends and parses JSON against the real server; error answers are ServerErrors with status and detail', async () => {
    const client = new ServerClient(`${t.url}/`, { token: t.workerToken });
    try {
      const reg = await client.request<{ status: string; name: string }>('POST', '/api/worker/pool/register', { name: 'client-test', capacity: 2 });
      expect(reg).toMatchObject({ status: 'registered', name: 'client-test' });
      const pools = await client.request<{ pools: { name: string; capacity: number }[] }>('GET', '/api/worker/pools');
      expect(pools.pools).toEqual([expect.objectContaining({ name: 'client-test', capacity: 2 })]);

      const missing = await client.request('POST', '/api/worker/pool/heartbeat', { name: 'nobody' }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(ServerError);
      expect(missing).toMatchObject({ status: 404, detail: 'worker pool nobody not found', message: 'POST /api/worker/pool/heartbeat: HTTP 404 worker pool nobody not found' });

      const invalid = await client.request('POST', '/api/worker/pool/register', { capacity: 'many' }).catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(ServerError);
      expect(invalid instanceof ServerError && invalid.status).toBe(422);
    } finally {
      client.close();
    }
  });

  it('keeps one connection alive across sequential requests, and reads non-JSON and empty answers', async () => {
    const raw = await rawServer((req, res) => {
      if (req.url === '/base/text') res.end('plain words');
      else if (req.url === '/base/empty') res.writeHead(204).end();
      else res.setHeader('content-type', 'application/json').end(JSON.stringify({ path: req.url, method: req.method }));
    });
    const client = new ServerClient(`${raw.url}/base`);
    try {
      for (let i = 0; i < 20; i++) expect(await client.request('POST', `/x?i=${i}`, { i })).toEqual({ path: `/base/x?i=${i}`, method: 'POST' });
      expect(await client.request('GET', '/text')).toBe('plain words');
      expect(await client.request('GET', '/empty')).toBeNull();
      expect(raw.connections).toBe(1);
    } finally {
      client.close();
      await raw.close();
    }
  });

  it('aborts on the caller signal and on its own timeout, and leaves no listener on a long-lived signal', async () => {
    const raw = await rawServer((_req, res) => {
      setTimeout(() => res.end('{}'), 10_000).unref();
    });
    const client = new ServerClient(raw.url);
    const quick = new ServerClient(raw.url, { timeoutMs: 100 });
    try {
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 50);
      const aborted = await client.request('POST', '/wait', {}, controller.signal).catch((e: unknown) => e);
      expect(aborted).toMatchObject({ name: 'AbortError' });
      const timedOut = await quick.request('GET', '/wait').catch((e: unknown) => e);
      expect(timedOut).toMatchObject({ name: 'TimeoutError' });
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await client.request('GET', '/x', undefined, controller.signal).catch((e: unknown) => e)).toMatchObject({ name: 'AbortError' });

      // The worker passes one signal to every claim: each request must take its listener back.
      const fast = await rawServer((_req, res) => res.end('{"ok":true}'));
      const fastClient = new ServerClient(fast.url);
      const longLived = new AbortController();
      for (let i = 0; i < 30; i++) await fastClient.request('POST', '/claim', {}, longLived.signal);
      expect(getEventListeners(longLived.signal, 'abort')).toHaveLength(0);
      fastClient.close();
      await fast.close();
    } finally {
      client.close();
      quick.close();
      await raw.close();
    }
  });

  it('sends again once when a kept-alive socket was closed by the server, never otherwise', async () => {
    // The second request on any connection finds it closed, as when the server's idle timeout
    // closes a socket just as the client reuses it.
    const flaky = await rawServer((req, res, nth) => {
      if (nth > 1) req.socket.destroy();
      else res.end(JSON.stringify({ nth }));
    });
    const client = new ServerClient(flaky.url);
    try {
      expect(await client.request('POST', '/a', {})).toEqual({ nth: 1 });
      expect(await client.request('POST', '/b', {})).toEqual({ nth: 1 });
      expect(flaky.requests).toBe(3);
    } finally {
      client.close();
      await flaky.close();
    }

    const dead = await rawServer((req) => req.socket.destroy());
    const fresh = new ServerClient(dead.url);
    try {
      const err = await fresh.request('POST', '/c', {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect(dead.requests).toBe(1);
    } finally {
      fresh.close();
      await dead.close();
    }
  });

  it('reports network failures as one-line TypeErrors without the query, the body or URL credentials', async () => {
    const port = await closedPort();
    const client = new ServerClient(`http://127.0.0.1:${port}`);
    const err = await client.request('POST', '/api/keychain/1/api?access_token=SECRET-QUERY', { value: 'SECRET-BODY' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err instanceof TypeError && err.message).toBe(`POST /api/keychain/1/api: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(err instanceof TypeError && err.cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(String(err)).not.toContain('SECRET');

    const withPassword = new ServerClient(`http://svc:SECRET-PASSWORD@127.0.0.1:${port}`);
    const refused = await withPassword.request('GET', '/api/worker/pools').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect(String(refused)).not.toContain('SECRET');
    const bad = await new ServerClient('not a url SECRET').request('GET', '/x').catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TypeError);
    expect(String(bad)).not.toContain('SECRET');
  });
});
