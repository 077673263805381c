// The gateway's rate limit for refused requests (per address) holds for API tokens the server
// refuses: the gateway cannot tell a real `svc_…` token from a made-up one, so it passes both on
// and counted each made-up one in a bucket of its own, so a client minting a new token per
// request was never limited and cost the server a token lookup each time.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';

const LIMIT = 10;

let server: TestApp;
let gw: TestGateway;

beforeAll(async () => {
  server = await startTestApp({ SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
  gw = await startTestGateway({ SVC_SERVER_URL: server.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_GATEWAY_RATE_LIMIT_PER_MINUTE: String(LIMIT) });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await server?.close();
});

const madeUp = () => `svc_${randomBytes(32).toString('base64url')}`;

describe('gateway: API tokens the server refuses count against the address', () => {
  it('limits a client sending a new made-up token each request; a token the server took keeps its own limit', async () => {
    // A token's first request counts against the address too: the gateway cannot know it is real.
    const good = bearer(await createApiToken(server.deps.db, 'ci', 'viewer'));
    expect((await http(gw.url, 'GET', '/api/executions', undefined, good)).status).toBe(200);

    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 5; i++) statuses.push((await http(gw.url, 'GET', '/api/executions', undefined, bearer(madeUp()))).status);
    expect(statuses.slice(0, LIMIT - 1)).toEqual(Array(LIMIT - 1).fill(401));
    expect(statuses.slice(LIMIT - 1)).toEqual(Array(6).fill(429));
    const refused = await http(gw.url, 'GET', '/api/executions', undefined, bearer(madeUp()));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Object.keys(refused.body)).toEqual(['detail']);

    // The token the server took is its own identity, limited by its own bucket.
    expect((await http(gw.url, 'GET', '/api/executions', undefined, good)).status).toBe(200);
  });
});
