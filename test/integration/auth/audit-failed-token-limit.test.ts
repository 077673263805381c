// SVC_AUTH=token: an address sending refused credentials was answered 401 as fast as it asked,
// each made-up token a database lookup. Past SVC_AUTH_FAILURES_PER_MINUTE refusals it now gets
// 429 with Retry-After before any lookup; a live token and another address are not held back.
// A real server on 127.0.0.1, clients from 127.0.0.1 and 127.0.0.2.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';

const LIMIT = 10;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token', SVC_AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
}, 60_000);
afterAll(async () => t?.close());

type Answer = { status: number; retryAfter: string | undefined; body: unknown };

/** GET `path` on the server from the local address `from`. */
function getFrom(from: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(path, t.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers, localAddress: from }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const retry = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, retryAfter: typeof retry === 'string' ? retry : undefined, body: text === '' ? null : JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const madeUp = () => bearer(`svc_${randomBytes(32).toString('base64url')}`);

describe('SVC_AUTH=token: refused credentials are limited per address', () => {
  it('answers 429 with Retry-After past the limit; a token in use and another address go on', async () => {
    const inUse = bearer(await createApiToken(t.deps.db, 'in-use', 'viewer'));
    expect((await getFrom('127.0.0.1', '/api/executions', inUse)).status).toBe(200);

    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await getFrom('127.0.0.1', '/api/executions', madeUp())).status);
    expect(statuses).toEqual(Array(LIMIT).fill(401));

    for (const headers of [madeUp(), bearer('not-a-token'), { authorization: 'Basic dXNlcjpwYXNz' }]) {
      const limited = await getFrom('127.0.0.1', '/api/executions', headers);
      expect(limited.status).toBe(429);
      expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
      expect(limited.body).toEqual({ detail: `too many refused credentials from this address: try again in ${limited.retryAfter} s` });
    }
    // No credential at all tries nothing: still the plain 401.
    expect((await getFrom('127.0.0.1', '/api/executions', {})).status).toBe(401);

    // The token this address used before is still served; so is another address, with a token
    // it never used before, and its own refusals count from zero.
    expect((await getFrom('127.0.0.1', '/api/executions', inUse)).status).toBe(200);
    const other = bearer(await createApiToken(t.deps.db, 'other', 'viewer'));
    expect((await getFrom('127.0.0.2', '/api/executions', other)).status).toBe(200);
    expect((await getFrom('127.0.0.2', '/api/executions', madeUp())).status).toBe(401);
    // A live token never used from the limited address goes on too (audit-failed-token-neighbours).
    const fresh = bearer(await createApiToken(t.deps.db, 'fresh', 'viewer'));
    // The server reads its live tokens at most once a second: this one is made after its last read.
    await new Promise((ok) => setTimeout(ok, 1_100));
    expect((await getFrom('127.0.0.1', '/api/executions', fresh)).status).toBe(200);
  });
});
