import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';

// Two origins: the task's target, which redirects, and another host's server that records what
// reached it. A credential is given for the target alone: fetch drops Authorization and Cookie on
// a hop to another origin, but sent an api_key header or a custom credential's headers on.
type Seen = { path: string; method: string; headers: IncomingHttpHeaders; body: string };
let target: Server;
let other: Server;
let targetUrl = '';
let otherUrl = '';
const seenByOther: Seen[] = [];
const seenByTarget: Seen[] = [];

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

function record(into: Seen[]): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const path = req.url ?? '';
      into.push({ path, method: req.method ?? '', headers: req.headers, body });
      const to = new URL(path, 'http://x').searchParams.get('to');
      const status = Number(new URL(path, 'http://x').searchParams.get('status') ?? 302);
      if (path.startsWith('/go') && to) {
        res.writeHead(status, { location: to });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reached: path, method: req.method, headers: req.headers, body }));
    });
  });
}

beforeAll(async () => {
  target = record(seenByTarget);
  other = record(seenByOther);
  targetUrl = await listen(target);
  otherUrl = await listen(other);
});
afterAll(async () => {
  target?.close();
  other?.close();
});

const ctx = (type: string, data: Record<string, unknown>): ToolContext => ({ signal: new AbortController().signal, env: {}, credential: { name: `${type}_cred`, type, data } });
const go = (to: string, status = 302) => `${targetUrl}/go?status=${status}&to=${encodeURIComponent(to)}`;

describe('an http task redirected to another origin', () => {
  it("sends an api_key credential's header to the URL it names, not to the host a redirect names", async () => {
    seenByOther.length = 0;
    const outcome = await http({ name: 't', kind: 'http', url: go(`${otherUrl}/landing`) }, ctx('api_key', { key: 'api-key-for-the-target-only' }));
    expect(outcome).toMatchObject({ status: 'ok', data: { status: 200, body: { reached: '/landing' } } });
    expect(seenByTarget.at(-1)?.headers['x-api-key']).toBe('api-key-for-the-target-only');
    expect(seenByOther).toHaveLength(1);
    expect(JSON.stringify(seenByOther)).not.toContain('api-key-for-the-target-only');
  });

  it("sends a custom credential's headers to no other origin, whatever the redirect's status (307 keeps method and body)", async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      seenByOther.length = 0;
      const outcome = await http(
        { name: 't', kind: 'http', method: 'POST', url: go(`${otherUrl}/landing`, status), body: { a: 1 } },
        ctx('custom', { headers: { 'X-Vault-Token': 'vault-token-for-the-target' } }),
      );
      expect(outcome).toMatchObject({ status: 'ok', data: { status: 200 } });
      expect(seenByOther).toHaveLength(1);
      expect(seenByOther[0].headers['x-vault-token']).toBeUndefined();
      // fetch's rules for the method: 303 (and 301, 302 of a POST) become a GET without body.
      expect(seenByOther[0].method).toBe(status === 307 || status === 308 ? 'POST' : 'GET');
      expect(seenByOther[0].body).toBe(status === 307 || status === 308 ? '{"a":1}' : '');
    }
  });

  it('keeps the credential on a redirect within its origin, and drops it for good once a hop left it', async () => {
    const same = await http({ name: 't', kind: 'http', url: go(`${targetUrl}/home`) }, ctx('api_key', { key: 'same-origin-key' }));
    expect(same).toMatchObject({ status: 'ok', data: { body: { reached: '/home', headers: { 'x-api-key': 'same-origin-key' } } } });

    // target → other → back to target: the last hop does not get it back (fetch's rule for Authorization).
    seenByTarget.length = 0;
    const back = await http({ name: 't', kind: 'http', url: go(`${otherUrl}/go?to=${encodeURIComponent(`${targetUrl}/back`)}`) }, ctx('api_key', { key: 'left-once-key' }));
    expect(back).toMatchObject({ status: 'ok', data: { body: { reached: '/back' } } });
    expect(seenByTarget.map((s) => s.headers['x-api-key'])).toEqual(['left-once-key', undefined]);
  });

  it('still follows at most 20 redirects, as fetch did', async () => {
    const server = createServer((req, res) => {
      res.writeHead(302, { location: req.url ?? '/' });
      res.end();
    });
    const url = await listen(server);
    try {
      const outcome = await http({ name: 't', kind: 'http', url: `${url}/again` }, ctx('api_key', { key: 'loop-key' }));
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
    } finally {
      server.close();
    }
  });
});
