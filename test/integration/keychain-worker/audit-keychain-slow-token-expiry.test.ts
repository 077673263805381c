// A token lives from when its endpoint issued it, not from when its answer arrived. A slow token
// endpoint (1.5 s to answer a token of expires_in 4) made the keychain entry read live 1.5 s after
// the token died (GET /api/keychain showed expires_at 5.5 s after issue), and an oauth2
// credential's cached token alike: a run in that window sent the dead token and failed HTTP 401.
// The lifetime is now counted from when the request was sent, less a tenth (at most 30 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const LIFETIME_MS = 4_000;
const ANSWER_DELAY_MS = 1_500;
let s: TestStack;
let target: HttpTarget;
/** When each token was issued: the moment its request arrived. */
const issuedAt = new Map<string, number>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

beforeAll(async () => {
  target = await startHttpTarget(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname === '/slow-token') {
      const token = `tok-${issuedAt.size + 1}-${Math.random().toString(36).slice(2)}`;
      issuedAt.set(token, Date.now());
      await sleep(ANSWER_DELAY_MS);
      return json(200, { access_token: token, token_type: 'Bearer', expires_in: LIFETIME_MS / 1000 });
    }
    if (url.pathname === '/strict') {
      // As a real API does: a token past its lifetime is refused.
      const issued = issuedAt.get(String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return issued !== undefined && Date.now() < issued + LIFETIME_MS ? json(200, { ok: true }) : json(401, { error: 'token expired' });
    }
  });
  s = await startTestStack({ workers: 1, concurrency: 2 });
  const cred = await http(s.url, 'POST', '/api/credentials', {
    name: 'slow_client_auth',
    type: 'oauth2',
    data: { client_id: 'c', client_secret: 'slow-client-secret', token_url: `${target.url}/slow-token` },
  });
  expect(cred.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const lastIssue = (): number => [...issuedAt.values()].at(-1) ?? NaN;

describe('a token endpoint that answers slowly', () => {
  it('a keychain entry expires when its token does, not later, and a run after that renews it', async () => {
    const reg = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slow_token_entry, path: kc/slow-token-entry }
workload: { base: "${target.url}" }
keychain:
  - { name: api, kind: oauth2, scope: global, auto_renew: true, endpoint: "{{ workload.base }}/slow-token" }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "{{ workload.base }}/strict", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`);
    const first = await s.wait(await s.run('kc/slow-token-entry'));
    expect(first.status).toBe('completed');
    const issued = lastIssue();
    const entry = await http(s.url, 'GET', `/api/keychain/${reg.catalog_id}/api?scope_type=global`);
    expect(entry.body.status).toBe('success');
    // Before: 5.5 s after the token was issued (its answer's arrival plus 4 s).
    expect(Date.parse(entry.body.expires_at)).toBeLessThanOrEqual(issued + LIFETIME_MS);

    // Past the token's death and before when the entry used to expire: before, the dead token was sent (401).
    await sleep(issued + LIFETIME_MS + 300 - Date.now());
    const second = await s.wait(await s.run('kc/slow-token-entry'));
    expect(second.error).toBeNull();
    expect(second.status).toBe('completed');
    expect(issuedAt.size).toBe(2);
  }, 30_000);

  it("an oauth2 credential's cached token is not used past its lifetime either", async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slow_token_credential, path: kc/slow-token-credential }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "{{ workload.base }}/strict", auth: slow_client_auth }
`);
    const before = issuedAt.size;
    const first = await s.wait(await s.run('kc/slow-token-credential'));
    expect(first.status).toBe('completed');
    const issued = lastIssue();
    await sleep(issued + LIFETIME_MS + 300 - Date.now());
    const second = await s.wait(await s.run('kc/slow-token-credential'));
    // Before: HTTP 401, the cached token dead since 0.3 s (cached till 3.6 s after its answer came).
    expect(second.error).toBeNull();
    expect(second.status).toBe('completed');
    expect(issuedAt.size - before).toBe(2);
  }, 30_000);
});
