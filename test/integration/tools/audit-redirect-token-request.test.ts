import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import { sendOutbound } from '../../../src/worker/keychain-http.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';

// A token endpoint (or a keychain's endpoint) that redirects to another origin: fetch re-sends a
// 307's or 308's body there (an oauth2 grant's client_secret) and every header but Authorization
// and Cookie (a credential's api key). What the other origin received is recorded.
type Seen = { path: string; headers: IncomingHttpHeaders; body: string };
let endpoint: Server;
let other: Server;
let endpointUrl = '';
let otherUrl = '';
const seenByOther: Seen[] = [];

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

beforeAll(async () => {
  other = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seenByOther.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/protected')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'a-token-from-elsewhere', expires_in: 3600 }));
    });
  });
  otherUrl = await listen(other);
  endpoint = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 307);
      res.writeHead(status, { location: `${otherUrl}/token` });
      res.end();
    });
  });
  endpointUrl = await listen(endpoint);
});
afterAll(async () => {
  endpoint?.close();
  other?.close();
});

describe('a token request redirected to another origin', () => {
  it("does not send an oauth2 credential's client_secret on to the host a 307 or 308 of its token_url names", async () => {
    for (const status of [307, 308]) {
      seenByOther.length = 0;
      const ctx: ToolContext = {
        signal: new AbortController().signal,
        env: {},
        credential: { name: `oauth_${status}_${Math.random().toString(36).slice(2)}`, type: 'oauth2', data: { token_url: `${endpointUrl}/token?status=${status}`, client_id: 'the-client', client_secret: 'client-secret-for-the-endpoint' } },
      };
      const outcome = await http({ name: 't', kind: 'http', url: `${otherUrl}/protected` }, ctx);
      expect(JSON.stringify(seenByOther)).not.toContain('client-secret-for-the-endpoint');
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'auth' } });
      expect(outcome.error?.message).toContain('would send the request');
    }
  });

  it("sends a keychain request's credential headers and client secret to no other origin", async () => {
    seenByOther.length = 0;
    const withHeader = await sendOutbound({ url: `${endpointUrl}/token?status=302`, method: 'GET', headers: { 'X-API-Key': 'keychain-api-key' } });
    expect(withHeader).toMatchObject({ ok: true, status: 200 });
    expect(seenByOther).toHaveLength(1);
    expect(seenByOther[0].headers['x-api-key']).toBeUndefined();

    seenByOther.length = 0;
    const grant = await sendOutbound({
      url: `${endpointUrl}/token?status=307`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      data: { grant_type: 'client_credentials', client_id: 'c', client_secret: 'keychain-client-secret' },
    });
    expect(seenByOther).toHaveLength(0);
    expect(grant).toMatchObject({ ok: false });
    if (!grant.ok) expect(grant.reason).not.toContain('keychain-client-secret');
  });
});
