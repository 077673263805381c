// Webhook deliveries through `svc gateway` carry no identity, so the gateway's per-identity limit
// never saw them: a sender could probe signatures and trigger names as fast as it liked. Refused
// deliveries (401, 404) now count against the sender's address, as refused API requests do; past
// the limit that address gets 429 with Retry-After before anything reaches the server. Accepted
// deliveries count nothing, so a busy, honest sender is never held back. A real gateway and server.
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';

const SECRET = 'whsec-limit-3e9a1c7b5d2f4086a1b3c5d7e9f10234';
const LIMIT_PER_MINUTE = 5;
const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: limited_hooks, path: hooks/limited }
triggers:
  - { name: push, kind: webhook, auth: limit_hook, signature: github, delivery_id: "{{ request.headers['x-github-delivery'] }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let a: TestApp;
let gw: TestGateway;

beforeAll(async () => {
  a = await startTestApp({ SVC_AUTH: 'token' });
  const admin = bearer(await createApiToken(a.deps.db, 'limit-admin', 'admin'));
  expect((await http(a.url, 'POST', '/api/credentials', { name: 'limit_hook', type: 'custom', data: { secret: SECRET } }, admin)).status).toBe(201);
  expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK }, admin)).status).toBe(201);
  gw = await startTestGateway({ SVC_SERVER_URL: a.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_GATEWAY_RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE) });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await a?.close();
});

async function deliver(name: string, signedWith: string): Promise<Response> {
  const body = JSON.stringify({ note: randomUUID() });
  const signature = `sha256=${createHmac('sha256', signedWith).update(body).digest('hex')}`;
  return fetch(`${gw.url}/api/hooks/hooks/limited/${name}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature, 'x-github-delivery': randomUUID() }, body });
}

describe('gateway: webhook deliveries and the address limit', () => {
  it('accepted deliveries count nothing; refused ones count, and past the limit the address gets 429 before the server', async () => {
    for (let i = 0; i < LIMIT_PER_MINUTE * 2; i++) expect((await deliver('push', SECRET)).status).toBe(202);
    // Probing: a wrong secret (401) and a trigger that is not there (404), up to the limit.
    const refused = [];
    for (let i = 0; i < LIMIT_PER_MINUTE; i++) refused.push((await deliver(i % 2 ? 'push' : 'nope', i % 2 ? 'guessed-secret' : SECRET)).status);
    expect(refused).toEqual([404, 401, 404, 401, 404]);
    const started = await http(a.url, 'GET', '/api/executions?path=hooks/limited&limit=100', undefined, bearer(await createApiToken(a.deps.db, 'limit-viewer', 'viewer')));
    const before = started.body.executions.length;
    // Past it: 429 with Retry-After, whatever the delivery, and the server sees none of them.
    for (const [name, secret] of [['push', 'guessed-secret'], ['push', SECRET]]) {
      const res = await deliver(name, secret);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const after = await http(a.url, 'GET', '/api/executions?path=hooks/limited&limit=100', undefined, bearer(await createApiToken(a.deps.db, 'limit-viewer-2', 'viewer')));
    expect(before).toBe(LIMIT_PER_MINUTE * 2);
    expect(after.body.executions.length).toBe(before);
  });
});
