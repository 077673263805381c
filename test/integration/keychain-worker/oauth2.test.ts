// Worker keychain resolution end to end: a real server on a fresh database, real in-process
// workers, a real local token server (`/token`, client credentials) and a protected endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;
/** Per `key`: how many token requests each custom token route answered. */
const customCalls = new Map<string, number>();

function issue(key: string, expiresIn: number): { access_token: string; token_type: string; expires_in: number } {
  const token = `kc-${key}-${target.issuedTokens.length + 1}-${Math.random().toString(36).slice(2)}`;
  target.issuedTokens.push(token);
  return { access_token: token, token_type: 'Bearer', expires_in: expiresIn };
}

beforeAll(async () => {
  target = await startHttpTarget(async (req, res, recorded) => {
    const url = new URL(req.url ?? '/', 'http://target');
    const key = url.searchParams.get('key') ?? '';
    const calls = (customCalls.get(`${url.pathname}:${key}`) ?? 0) + 1;
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (url.pathname) {
      // The first token request succeeds (expires_in 1); every later one answers 500.
      case '/token-once':
        customCalls.set(`${url.pathname}:${key}`, calls);
        return calls === 1 ? answer(200, issue(key, 1)) : answer(500, { error: 'token service down' });
      // A slow token endpoint, so that concurrent commands overlap while it answers.
      case '/token-slow':
        customCalls.set(`${url.pathname}:${key}`, calls);
        await new Promise((r) => setTimeout(r, 400));
        return answer(200, issue(key, 3600));
      // A JSON token endpoint for `kind: http` entries (no credential): checks the JSON body it is sent.
      case '/json-token': {
        customCalls.set(`${url.pathname}:${key}`, calls);
        let body: Json = null;
        try {
          body = JSON.parse(recorded.body);
        } catch {
          // not JSON
        }
        if (req.headers['content-type'] !== 'application/json' || body?.user !== 'svc') return answer(400, { error: 'bad request' });
        return answer(200, { api_key: issue(key, 1).access_token, lifetime: 1 });
      }
      // A token answer that says nothing of its lifetime (no expires_in).
      case '/token-no-expiry': {
        const { access_token, token_type } = issue(key, 0);
        return answer(200, { access_token, token_type });
      }
      case '/needs-key':
        return req.headers['x-api-key'] && target.issuedTokens.includes(String(req.headers['x-api-key'])) ? answer(200, { ok: true }) : answer(401, { error: 'unauthorized' });
    }
  });
  s = await startTestStack({ workers: 1, concurrency: 4 });
  const cred = await http(s.url, 'POST', '/api/credentials', {
    name: 'api_client_auth',
    type: 'oauth2',
    data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: `${target.url}/token` },
  });
  expect(cred.status).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tokenRequests = (path = '/token') => target.requests.filter((r) => r.path === path).length;
const logText = () => s.logs.join('');
const count = (text: string, needle: string) => text.split(needle).length - 1;

function playbook(path: string, keychain: string, extraSteps = ''): string {
  return `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { base: "${target.url}" }
keychain:
  - ${keychain}
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        method: GET
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
${extraSteps}`;
}

async function register(yaml: string): Promise<{ path: string; catalogId: number }> {
  const reg = await s.register(yaml);
  return { path: reg.path, catalogId: reg.catalog_id };
}

async function runToEnd(path: string, payload: Record<string, unknown> = {}): Promise<{ id: number; final: Json; events: Json[] }> {
  const id = await s.run(path, payload);
  const final = await s.wait(id);
  return { id, final, events: await s.events(id) };
}

const authHeaderOf = (index: number) => target.requests.filter((r) => r.path === '/protected')[index]?.headers.authorization;

describe('oauth2 keychain entries resolved by the worker', () => {
  it('fetches a global token once, reuses it in a second execution, and renews it exactly once after it expires', async () => {
    const { path, catalogId } = await register(
      playbook('kcw/global', `{ name: api, kind: oauth2, scope: global, auth: api_client_auth, auto_renew: true, endpoint: "{{ workload.base }}/token?expires_in=2" }`),
    );
    const before = tokenRequests();
    const protectedBefore = target.requests.filter((r) => r.path === '/protected').length;

    const first = await runToEnd(path);
    expect(first.final.status).toBe('completed');
    expect(first.final.result).toMatchObject({ status: 200, body: { ok: true } });
    const second = await runToEnd(path);
    expect(second.final.status).toBe('completed');
    expect(tokenRequests() - before).toBe(1);
    // The token request was a client-credentials form post built from the credential.
    const tokenCall = target.requests.filter((r) => r.path === '/token').at(-1);
    expect(tokenCall?.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(new URLSearchParams(tokenCall?.body).get('grant_type')).toBe('client_credentials');
    const firstToken = target.issuedTokens.at(-1);
    expect(authHeaderOf(protectedBefore)).toBe(`Bearer ${firstToken}`);
    expect(authHeaderOf(protectedBefore + 1)).toBe(`Bearer ${firstToken}`);

    const stored = await http(s.url, 'GET', `/api/keychain/${catalogId}/api?scope_type=global`);
    expect(stored.body).toMatchObject({ status: 'success', cache_key: `api:${catalogId}:global`, credential_type: 'oauth2', cache_type: 'token', auto_renew: true });
    expect(stored.body.token_data.access_token).toBe(firstToken);

    await sleep(2_300); // expires_in was 2 s
    expect(logText()).not.toContain(`KEYCHAIN: Entry 'api' expired`);
    const third = await runToEnd(path);
    expect(third.final.status).toBe('completed');
    expect(tokenRequests() - before).toBe(2);
    const renewedToken = target.issuedTokens.at(-1);
    expect(renewedToken).not.toBe(firstToken);
    expect(authHeaderOf(protectedBefore + 2)).toBe(`Bearer ${renewedToken}`);
    expect(count(logText(), `KEYCHAIN: Entry 'api' expired`)).toBe(1);
    expect(logText()).not.toContain(`KEYCHAIN: Failed to renew 'api'`);

    // The renewed entry is live again: the next execution uses it without a token request.
    const fourth = await runToEnd(path);
    expect(fourth.final.status).toBe('completed');
    expect(tokenRequests() - before).toBe(2);
    expect(authHeaderOf(protectedBefore + 3)).toBe(`Bearer ${renewedToken}`);
  });

  it("the definition's ttl_seconds bounds the entry's life below the token's expires_in, when created and when renewed", async () => {
    const { path, catalogId } = await register(
      playbook('kcw/ttl-bound', `{ name: api, kind: oauth2, scope: global, auth: api_client_auth, auto_renew: true, ttl_seconds: 1, endpoint: "{{ workload.base }}/token?expires_in=3600" }`),
    );
    const before = tokenRequests();
    const stored = async () => (await http(s.url, 'GET', `/api/keychain/${catalogId}/api?scope_type=global`)).body;
    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(tokenRequests() - before).toBe(1);
    const first = await stored();
    expect(first.status).toBe('success');
    expect(first.ttl_seconds).toBeLessThanOrEqual(1);

    await sleep(1_300); // ttl_seconds was 1 s, though the token endpoint said 3600
    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(tokenRequests() - before).toBe(2);
    const renewed = await stored();
    expect(renewed.status).toBe('success');
    expect(renewed.token_data.access_token).not.toBe(first.token_data.access_token);
    expect(renewed.ttl_seconds).toBeLessThanOrEqual(1);
  });

  it("a global entry whose token answer and definition give no lifetime lives the spec's global default, 86400 s (not 3600)", async () => {
    const { path, catalogId } = await register(
      playbook('kcw/no-expiry', `{ name: api, kind: oauth2, scope: global, auth: api_client_auth, endpoint: "{{ workload.base }}/token-no-expiry" }`),
    );
    expect((await runToEnd(path)).final.status).toBe('completed');
    const stored = (await http(s.url, 'GET', `/api/keychain/${catalogId}/api?scope_type=global`)).body;
    expect(stored.status).toBe('success');
    expect(stored.ttl_seconds).toBeGreaterThan(86_000);
    expect(stored.ttl_seconds).toBeLessThanOrEqual(86_400);
  });

  it("no endpoint in the definition: the token request is a client-credentials form post to the auth credential's token_url, and so is the renewal", async () => {
    const tokenUrl = `${target.url}/token?key=from-credential&expires_in=1`;
    const cred = await http(s.url, 'POST', '/api/credentials', {
      name: 'url_only_auth',
      type: 'oauth2',
      data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: tokenUrl, scope: 'read write' },
    });
    expect(cred.status).toBe(201);
    const { path, catalogId } = await register(playbook('kcw/credential-url', `{ name: api, kind: oauth2, scope: global, auth: url_only_auth, auto_renew: true }`));
    const calls = () => target.requests.filter((r) => r.path === '/token' && r.query.key === 'from-credential');
    const protectedBefore = target.requests.filter((r) => r.path === '/protected').length;

    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(calls()).toHaveLength(1);
    const [first] = calls();
    expect(first.method).toBe('POST');
    expect(first.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(first.headers.authorization).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(first.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'read write',
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    const firstToken = target.issuedTokens.at(-1);
    expect(authHeaderOf(protectedBefore)).toBe(`Bearer ${firstToken}`);

    // Expired: the stored renew request is the credential's token_url, without the client secret.
    await sleep(1_300);
    const expired = await http(s.url, 'GET', `/api/keychain/${catalogId}/api`);
    expect(expired.body).toMatchObject({ status: 'expired', auto_renew: true, renew_config: { endpoint: tokenUrl, method: 'POST' } });
    expect(JSON.stringify(expired.body)).not.toContain(DEFAULT_CLIENT_SECRET);

    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(calls()).toHaveLength(2);
    expect(calls()[1].headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(new URLSearchParams(calls()[1].body).get('client_secret')).toBe(DEFAULT_CLIENT_SECRET);
    expect(authHeaderOf(protectedBefore + 1)).toBe(`Bearer ${target.issuedTokens.at(-1)}`);
    expect(target.issuedTokens.at(-1)).not.toBe(firstToken);
  });

  it('fails the step and the execution when renewal answers 500, logging the exact line, without retrying', async () => {
    const { path } = await register(
      playbook('kcw/renew-fails', `{ name: api, kind: oauth2, scope: global, auto_renew: true, endpoint: "{{ workload.base }}/token-once?key=renew" }`),
    );
    const first = await runToEnd(path);
    expect(first.final.status).toBe('completed');
    expect(customCalls.get('/token-once:renew')).toBe(1);
    expect(logText()).toContain(`KEYCHAIN: Entry 'api' not found`);

    await sleep(1_300); // expires_in was 1 s
    const second = await runToEnd(path);
    expect(second.final.status).toBe('failed');
    expect(customCalls.get('/token-once:renew')).toBe(2); // one renewal attempt, not retried
    const failedCall = second.events.find((e: Json) => e.event_type === 'call.error');
    expect(failedCall.error.code).toBe('template_error');
    expect(failedCall.error.message).toContain(`keychain entry 'api' has no field 'access_token'`);
    const failLine = s.logs.find((line) => line.includes(`KEYCHAIN: Failed to renew 'api'`));
    expect(failLine).toBeDefined();
    expect(JSON.parse(failLine ?? '{}')).toMatchObject({ level: 40, msg: `KEYCHAIN: Failed to renew 'api'` });
    expect(failLine).toContain('HTTP 500');
    expect(failLine).not.toContain('token service down'); // the response body is never logged
  });

  it('an expired entry without auto_renew resolves to {} and fails the step', async () => {
    const { path } = await register(
      playbook('kcw/no-renew', `{ name: api, kind: oauth2, scope: global, auth: api_client_auth, endpoint: "{{ workload.base }}/token?expires_in=1" }`),
    );
    expect((await runToEnd(path)).final.status).toBe('completed');
    const requests = tokenRequests();
    await sleep(1_300);
    const expired = await runToEnd(path);
    expect(expired.final.status).toBe('failed');
    expect(tokenRequests()).toBe(requests);
    expect(logText()).toContain(`KEYCHAIN: Entry 'api' expired`);
    expect(expired.events.find((e: Json) => e.event_type === 'call.error').error.code).toBe('template_error');
  });

  it('a local entry lives only as long as its execution: reused by a later step, deleted at completion, not shared', async () => {
    const second = `  - step: again
    tool:
      - name: call
        kind: http
        method: GET
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
`;
    const yaml = playbook('kcw/local', `{ name: api, kind: oauth2, scope: local, auth: api_client_auth }`)
      .replace('workflow:\n  - step: start\n', 'workflow:\n  - step: start\n    next: again\n')
      .concat(second);
    const { path, catalogId } = await register(yaml);
    const before = tokenRequests();
    const run = await runToEnd(path);
    expect(run.final.status).toBe('completed');
    expect(run.events.filter((e: Json) => e.event_type === 'call.done')).toHaveLength(2);
    expect(tokenRequests() - before).toBe(1); // the second step read the stored local entry
    const after = await http(s.url, 'GET', `/api/keychain/${catalogId}/api?scope_type=local&execution_id=${run.id}`);
    expect(after.body).toMatchObject({ status: 'not_found', cache_key: `api:${catalogId}:${run.id}` });

    const other = await runToEnd(path);
    expect(other.final.status).toBe('completed');
    expect(tokenRequests() - before).toBe(2); // a new execution gets its own token
  });

  it('concurrent commands that need the same missing entry share one token request', async () => {
    const yaml = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_parallel, path: kcw/parallel }
workload: { base: "${target.url}", items: [1, 2, 3, 4] }
keychain:
  - { name: api, kind: oauth2, scope: global, endpoint: "{{ workload.base }}/token-slow?key=parallel" }
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: n, mode: parallel, max_in_flight: 4 }
    tool:
      - name: call
        kind: http
        method: GET
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
`;
    const { path } = await register(yaml);
    const runs = await Promise.all([runToEnd(path), runToEnd(path)]);
    for (const r of runs) expect(r.final.status).toBe('completed');
    expect(customCalls.get('/token-slow:parallel')).toBe(1);
  });

  it('an http entry: JSON token request, whole answer as the value, custom token and ttl fields, renewed by renew_config', async () => {
    const yaml = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_http, path: kcw/http }
workload: { base: "${target.url}" }
keychain:
  - name: svc_key
    kind: http
    scope: global
    auto_renew: true
    endpoint: "{{ workload.base }}/json-token?key=http"
    data: { user: svc }
    token_field: api_key
    ttl_field: lifetime
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        method: GET
        url: "{{ workload.base }}/needs-key"
        headers: { X-Api-Key: "{{ keychain.svc_key.api_key }}" }
`;
    const { path, catalogId } = await register(yaml);
    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(customCalls.get('/json-token:http')).toBe(1);
    const stored = await http(s.url, 'GET', `/api/keychain/${catalogId}/svc_key`);
    expect(stored.body).toMatchObject({ status: 'success', credential_type: 'http', auto_renew: true });
    expect(stored.body.ttl_seconds).toBeLessThanOrEqual(1);
    await sleep(1_300);
    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(customCalls.get('/json-token:http')).toBe(2);
  });

  it('an entry stored through the API and used without a definition keeps its credential_type when the worker renews it', async () => {
    const yaml = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_stored, path: kcw/stored }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        method: GET
        url: "{{ workload.base }}/needs-key"
        headers: { X-Api-Key: "{{ keychain.stored_key.api_key }}" }
`;
    const { path, catalogId } = await register(yaml);
    const put = await http(s.url, 'POST', `/api/keychain/${catalogId}/stored_key`, {
      token_data: { api_key: issue('stored', 1).access_token },
      credential_type: 'http',
      ttl_seconds: 1,
      auto_renew: true,
      renew_config: { endpoint: `${target.url}/json-token?key=stored`, data: { user: 'svc' }, token_field: 'api_key', ttl_field: 'lifetime' },
    });
    expect(put.status).toBe(201);
    await sleep(1_300);
    expect((await http(s.url, 'GET', `/api/keychain/${catalogId}/stored_key`)).body).toMatchObject({ status: 'expired', auto_renew: true });
    expect((await runToEnd(path)).final.status).toBe('completed');
    expect(customCalls.get('/json-token:stored')).toBe(1);
    const renewed = await http(s.url, 'GET', `/api/keychain/${catalogId}/stored_key`);
    expect(renewed.body).toMatchObject({ status: 'success', credential_type: 'http', cache_type: 'token', auto_renew: true });
  });

  it('a referenced entry with no definition and no stored value is named as unavailable', async () => {
    const yaml = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_undefined, path: kcw/undefined }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.nowhere.access_token }}" }
`;
    const { path } = await register(yaml);
    const run = await runToEnd(path);
    expect(run.final.status).toBe('failed');
    expect(run.events.find((e: Json) => e.event_type === 'call.error').error.message).toContain(`keychain entry 'nowhere' is not available`);
    expect(logText()).toContain(`KEYCHAIN: Entry 'nowhere' not found`);
  });
});
