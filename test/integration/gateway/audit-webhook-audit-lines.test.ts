// Webhook deliveries through the gateway (POST /api/hooks/{path}/{name}: no identity, the
// trigger's signature authenticates) wrote no 'gateway audit' line, accepted or refused, where
// docs/gateway.md says each state-changing request writes one: a delivery starts an execution, and
// a sender probing signatures and trigger names (401, 404, then 429) left no trace at the gateway.
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';

const SECRET = 'whsec-audit-5b1d9f3a7c2e4068b0d2f4a6c8e01357';
const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: audited_hooks, path: hooks/audited }
triggers:
  - { name: push, kind: webhook, auth: audit_hook, signature: github }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let a: TestApp;
let gw: TestGateway;

beforeAll(async () => {
  a = await startTestApp({ SVC_AUTH: 'token' });
  const admin = bearer(await createApiToken(a.deps.db, 'audit-hooks-admin', 'admin'));
  expect((await http(a.url, 'POST', '/api/credentials', { name: 'audit_hook', type: 'custom', data: { secret: SECRET } }, admin)).status).toBe(201);
  expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK }, admin)).status).toBe(201);
  gw = await startTestGateway({ SVC_SERVER_URL: a.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_GATEWAY_RATE_LIMIT_PER_MINUTE: '2' });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await a?.close();
});

async function deliver(name: string, signedWith: string): Promise<number> {
  const body = JSON.stringify({ note: randomUUID() });
  const signature = `sha256=${createHmac('sha256', signedWith).update(body).digest('hex')}`;
  const res = await fetch(`${gw.url}/api/hooks/hooks/audited/${name}?via=test`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body });
  await res.arrayBuffer();
  return res.status;
}

describe('gateway: webhook deliveries', () => {
  it('write an audit line each, accepted, refused or past the limit, naming no one and no query string', async () => {
    const statuses = [await deliver('push', SECRET), await deliver('push', 'guessed-secret'), await deliver('nope', SECRET), await deliver('push', SECRET)];
    expect(statuses).toEqual([202, 401, 404, 429]);
    const audits = gw.logs.filter((l) => l.includes('"gateway audit"')).map((l) => JSON.parse(l).audit);
    const line = (status: number, name: string) => ({ who: 'anonymous', method: 'POST', path: `/api/hooks/hooks/audited/${name}`, status, ip: '127.0.0.1' });
    expect(audits).toEqual([line(202, 'push'), line(401, 'push'), line(404, 'nope'), line(429, 'push')]);
    // Reads of the public routes change nothing and write none.
    expect((await fetch(`${gw.url}/api/health`)).status).toBe(200);
    expect(gw.logs.filter((l) => l.includes('"gateway audit"'))).toHaveLength(4);
  });
});
