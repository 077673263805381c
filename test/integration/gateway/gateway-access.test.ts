// The gateway in front of a real server (SVC_AUTH=gateway) and worker, with a real OpenID
// provider: bearer JWTs of programs (each role's allowed and refused routes), the server's own
// API tokens passed through, forged / expired / wrong-audience / wrong-issuer / `alg: none` /
// HMAC-confused tokens refused, spoofed identity headers dropped, and no credential in any log.
import { createHmac } from 'node:crypto';
import { exportSPKI, generateKeyPair, importJWK, SignJWT, UnsecuredJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyDigest, signIdentity } from '../../../src/auth/identity-assertion.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { API_AUDIENCE, GATEWAY_CLIENT_SECRET, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const PLAYBOOK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: hello, path: gw/hello }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
const secrets: string[] = [];

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  gw = await startTestGateway({
    ...gatewayEnv(stack, idp, TEST_GATEWAY_SECRET),
    SVC_OIDC_PATHS_CLAIM: 'svc_paths',
  });
  secrets.push(TEST_GATEWAY_SECRET, GATEWAY_CLIENT_SECRET);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await stack?.close();
  await idp?.close();
});

const as = async (client: string): Promise<Record<string, string>> => {
  const token = await idp.programToken(client);
  secrets.push(token);
  return bearer(token);
};

/** A token signed with the provider's own key, with claims changed from a good one's. */
async function signedLike(claims: Record<string, unknown>, key: JWK = idp.signingKey, alg = 'RS256'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ roles: ['admin'], ...claims }).setProtectedHeader({ alg, kid: String(key.kid ?? 'test-key-1'), typ: 'at+jwt' });
  const full = { iss: idp.issuer, aud: API_AUDIENCE, sub: 'mallory', iat: now, exp: now + 300, ...claims };
  jwt.setIssuer(String(full.iss)).setAudience(full.aud as string).setSubject(String(full.sub)).setIssuedAt(Number(full.iat)).setExpirationTime(Number(full.exp));
  return jwt.sign(await importJWK(key, alg));
}

describe('gateway: health and readiness', () => {
  it('answers /health with the text ok, and /ready once the server and the provider are there', async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    const ready = await http(gw.url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ready: true, upstream: 'reachable', identity_provider: 'loaded', sessions: 'reachable' });
  });
});

describe('gateway: bearer JWTs of programs', () => {
  it('lets each role in where it belongs and records who started the execution', async () => {
    const admin = await as('program-admin');
    const operator = await as('program-operator');
    const viewer = await as('program-viewer');
    const none = await as('program-none');

    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK }, admin)).status).toBe(201);
    // viewer: reads, never runs
    expect((await http(gw.url, 'GET', '/api/executions', undefined, viewer)).status).toBe(200);
    const refusedRun = await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, viewer);
    expect(refusedRun.status).toBe(403);
    expect(Object.keys(refusedRun.body)).toEqual(['detail']);
    expect(refusedRun.body.detail).toContain('needs role operator');
    // operator: runs, but no admin routes
    const run = await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, operator);
    expect(run.status).toBe(200);
    const refusedAdmin = await http(gw.url, 'POST', '/api/credentials', { name: 'x_auth', type: 'bearer', data: { token: 'x' } }, operator);
    expect(refusedAdmin.status).toBe(403);
    expect(Object.keys(refusedAdmin.body)).toEqual(['detail']);
    // admin: admin routes
    expect((await http(gw.url, 'GET', '/api/keychain/catalog/1', undefined, admin)).status).toBe(200);
    // no mapped role: refused by the gateway itself
    const noRole = await http(gw.url, 'GET', '/api/executions', undefined, none);
    expect(noRole.status).toBe(403);
    expect(Object.keys(noRole.body)).toEqual(['detail']);

    // The worker runs it; the server recorded the program's subject as the starter.
    const id = run.body.execution_id as number;
    let status = '';
    for (let i = 0; i < 200 && status !== 'completed'; i++) {
      status = (await http(gw.url, 'GET', `/api/executions/${id}`, undefined, viewer)).body.status;
      if (status !== 'completed') await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(status).toBe('completed');
    const events = await http(gw.url, 'GET', `/api/events/${id}`, undefined, viewer);
    const started = events.body.events.find((e: { event_type: string }) => e.event_type === 'execution.started');
    expect(started.context.requested_by).toMatchObject({ sub: 'program-operator', role: 'operator', via: 'gateway' });

    // The server's event stream of a batch, through the gateway, to its terminal status.
    const batch = await http(gw.url, 'POST', '/api/events/batch', { execution_id: id, events: [{ event_type: 'command.started', command_id: null }] }, operator);
    expect(batch.status).toBe(202);
    const stream = await fetch(`${gw.url}/api/events/batch/${batch.body.request_id}/stream`, { headers: viewer });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const text = await stream.text();
    expect(text).toContain('event: status');
    expect(text).toMatch(/"state":"(completed|failed)"/);
  });

  it('keeps a caller whose token lists playbook path patterns to starting those', async () => {
    const scoped = await as('program-reports');
    const refused = await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, scoped);
    expect(refused.status).toBe(403);
    expect(Object.keys(refused.body)).toEqual(['detail']);
    expect(refused.body.detail).toContain('reports/*');
    expect((await http(gw.url, 'POST', '/api/execute', { path: 'gw/hello' }, scoped)).status).toBe(403);
    // Matching paths reach the server (which knows no such playbook); others of the same role are not restricted.
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'reports/daily' }, scoped)).status).toBe(404);
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'shared/a/b' }, scoped)).status).toBe(404);
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, await as('program-operator'))).status).toBe(200);
  });

  it('keeps such a caller to its patterns however the URL is spelt, and on retries and trigger fires', async () => {
    const scoped = await as('program-reports');
    const admin = await as('program-admin');
    // The server's router decodes %70 to p: the same route, so the same rule.
    const encoded = await http(gw.url, 'POST', '/api/run/%70laybook', { path: 'gw/hello' }, scoped);
    expect(encoded.status).toBe(403);
    expect(encoded.body.detail).toContain('reports/*');
    expect((await http(gw.url, 'POST', '/api/%65xecute', { path: 'gw/hello' }, scoped)).status).toBe(403);
    // The server's JSON parser skips a byte order mark; so does the check.
    expect((await http(gw.url, 'POST', '/api/run/playbook', `\uFEFF${JSON.stringify({ path: 'gw/hello' })}`, scoped)).status).toBe(403);
    // A retry starts a new execution of the old one's playbook.
    const run = await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, admin);
    expect(run.status).toBe(200);
    await until('the run ends', async () => (await http(gw.url, 'GET', `/api/executions/${run.body.execution_id}`, undefined, admin)).body.status === 'completed');
    const retried = await http(gw.url, 'POST', `/api/executions/${run.body.execution_id}/retry`, { from_step: 'start' }, scoped);
    expect(retried.status).toBe(403);
    expect(Object.keys(retried.body)).toEqual(['detail']);
    expect(retried.body.detail).toContain('gw/hello');
    // One the server cannot show gets the server's own answer to the retry.
    expect((await http(gw.url, 'POST', '/api/executions/999999/retry', { from_step: 'start' }, scoped)).status).toBe(404);
    expect((await http(gw.url, 'POST', '/api/executions/abc/retry', { from_step: 'start' }, scoped)).status).toBe(422);
    // A fire (or backfill) starts an execution of the trigger's playbook; pausing starts none.
    const hooked = PLAYBOOK.replace('path: gw/hello', 'path: gw/hooked') + 'triggers:\n  - { name: nightly, kind: schedule, cron: "@daily" }\n';
    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: hooked }, admin)).status).toBe(201);
    const fired = await http(gw.url, 'POST', '/api/triggers/gw/hooked/nightly/fire', {}, scoped);
    expect(fired.status).toBe(403);
    expect(fired.body.detail).toContain('gw/hooked');
    const backfill = { from: new Date(Date.now() - 3 * 86_400_000).toISOString(), to: new Date().toISOString() };
    expect((await http(gw.url, 'POST', '/api/triggers/gw/%68ooked/nightly/backfill', backfill, scoped)).status).toBe(403);
    expect((await http(gw.url, 'POST', '/api/triggers/gw/hooked/nightly/pause', {}, scoped)).status).toBe(200);
    // What matches the patterns still goes through.
    const allowed = hooked.replace('path: gw/hooked', 'path: reports/hooked');
    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: allowed }, admin)).status).toBe(201);
    const own = await http(gw.url, 'POST', '/api/triggers/reports/hooked/nightly/fire', {}, scoped);
    expect(own.status).toBe(202);
    await until('its run ends', async () => (await http(gw.url, 'GET', `/api/executions/${own.body.execution_id}`, undefined, admin)).body.status === 'completed');
    expect((await http(gw.url, 'POST', `/api/executions/${own.body.execution_id}/retry`, { from_step: 'start' }, scoped)).status).toBe(201);
  });

  it('holds such a caller\'s MCP lifecycle actions to its patterns: the server document\'s path and the playbook the action starts', async () => {
    const scoped = await as('program-reports');
    const admin = await as('program-admin');
    const lifecycle = (path: string) => PLAYBOOK.replace('name: hello, path: gw/hello', `name: ${path.replaceAll('/', '-')}, path: ${path}`);
    for (const path of ['shared/mcp/up', 'gw/mcp-up']) expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: lifecycle(path) }, admin)).status).toBe(201);
    const server = (name: string, path: string, actions: Record<string, string>) =>
      `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: ${name}, path: ${path} }\nendpoint: http://127.0.0.1:1/mcp\nlifecycle: ${JSON.stringify(actions)}\n`;
    const register = async (content: string) => expect((await http(gw.url, 'POST', '/api/catalog/register', { content, resource_type: 'mcp' }, admin)).status).toBe(201);
    // Its document inside the patterns; deploy starts a playbook inside them, undeploy one outside.
    await register(server('mcp-in', 'reports/mcp-in', { deploy: 'shared/mcp/up', undeploy: 'gw/mcp-up' }));
    // Its document outside the patterns, though its deploy starts a playbook inside them.
    await register(server('mcp-out', 'gw/mcp-out', { deploy: 'shared/mcp/up' }));
    const act = (name: string, action: string, who: Record<string, string>) => http(gw.url, 'POST', `/api/mcp/mcp/${name}/lifecycle/${action}`, {}, who);

    const outside = await act('mcp-out', 'deploy', scoped);
    expect(outside.status).toBe(403);
    expect(Object.keys(outside.body)).toEqual(['detail']);
    expect(outside.body.detail).toContain('gw/mcp-out');
    // The server's router decodes %6F to o: the same server, so the same rule.
    expect((await act('mcp-%6Fut', 'deploy', scoped)).status).toBe(403);
    const startsOutside = await act('mcp-in', 'undeploy', scoped);
    expect(startsOutside.status).toBe(403);
    expect(startsOutside.body.detail).toContain('gw/mcp-up');
    const inside = await act('mcp-in', 'deploy', scoped);
    expect(inside.status).toBe(202);
    expect(inside.body.path).toBe('shared/mcp/up');
    await until('its run ends', async () => (await http(gw.url, 'GET', `/api/executions/${inside.body.execution_id}`, undefined, admin)).body.status === 'completed');
    // A server or action the server does not know gets its own answer (404, naming the actions).
    expect((await act('mcp-none', 'deploy', scoped)).status).toBe(404);
    const unknownAction = await act('mcp-in', 'restart', scoped);
    expect(unknownAction.status).toBe(404);
    expect(unknownAction.body.detail).toContain('deploy, undeploy');
    // Refused actions started nothing and left the servers as they were; callers without patterns are not held.
    const servers = await http(gw.url, 'GET', '/api/mcp/servers', undefined, admin);
    const statusOf = (name: string) => servers.body.items.find((s: { name: string }) => s.name === name);
    expect(statusOf('mcp-out')).toMatchObject({ status: 'registered', last_execution_id: null });
    expect(statusOf('mcp-in')).toMatchObject({ last_action: 'deploy', last_execution_id: inside.body.execution_id });
    expect((await act('mcp-out', 'deploy', await as('program-operator'))).status).toBe(202);
  });

  it('refuses a request with no credential: 401 with a Bearer challenge and only a detail', async () => {
    const res = await http(gw.url, 'GET', '/api/executions');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(Object.keys(res.body)).toEqual(['detail']);
  });

  it('refuses forged, expired, wrong-audience, wrong-issuer, alg none and HMAC-confused tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { privateKey: otherKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const { exportJWK } = await import('jose');
    const forgedKey: JWK = { ...(await exportJWK(otherKey)), kid: 'test-key-1', alg: 'RS256' };
    // HMAC confusion: HS256 keyed with the provider's public key text, which a naive verifier would accept.
    const providerPublic = await importJWK({ kty: 'RSA', n: idp.signingKey.n, e: idp.signingKey.e }, 'RS256');
    if (providerPublic instanceof Uint8Array) throw new Error('expected a public key');
    const pem = await exportSPKI(providerPublic);
    const hmacHeader = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'test-key-1' })).toString('base64url');
    const hmacBody = Buffer.from(JSON.stringify({ iss: idp.issuer, aud: API_AUDIENCE, sub: 'mallory', exp: now + 300, roles: ['admin'] })).toString('base64url');
    const hmacToken = `${hmacHeader}.${hmacBody}.${createHmac('sha256', pem).update(`${hmacHeader}.${hmacBody}`).digest('base64url')}`;
    void publicKey;
    const bad: Record<string, string> = {
      forged: await signedLike({}, forgedKey),
      expired: await signedLike({ iat: now - 3600, exp: now - 600 }),
      'not yet valid': await signedLike({ nbf: now + 600 }),
      'wrong audience': await signedLike({ aud: 'someone-else' }),
      'wrong issuer': await signedLike({ iss: 'http://127.0.0.1:1' }),
      'alg none': new UnsecuredJWT({ iss: idp.issuer, aud: API_AUDIENCE, sub: 'mallory', roles: ['admin'] }).setExpirationTime(now + 300).encode(),
      'HMAC confusion': hmacToken,
      garbage: 'not-a-token-at-all',
    };
    for (const [what, token] of Object.entries(bad)) {
      if (what === 'forged') {
        // sanity: the same claims with the real key are accepted, so the refusal is the key's doing
        expect((await http(gw.url, 'GET', '/api/executions', undefined, bearer(await signedLike({})))).status, 'control').toBe(200);
      }
      secrets.push(token);
      const res = await http(gw.url, 'GET', '/api/executions', undefined, bearer(token));
      expect(res.status, what).toBe(401);
      expect(Object.keys(res.body), what).toEqual(['detail']);
      expect(res.headers.get('www-authenticate'), what).toBe('Bearer error="invalid_token"');
    }
  });
});

describe('gateway: the server\'s API tokens', () => {
  it('pass through with their own roles', async () => {
    const operator = await createApiToken(stack.deps.db, 'gw-operator', 'operator');
    const viewer = await createApiToken(stack.deps.db, 'gw-viewer', 'viewer');
    secrets.push(operator, viewer);
    expect((await http(gw.url, 'GET', '/api/executions', undefined, bearer(viewer))).status).toBe(200);
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, bearer(viewer))).status).toBe(403);
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, bearer(operator))).status).toBe(200);
    const unknown = 'svc_' + 'A'.repeat(43);
    expect((await http(gw.url, 'GET', '/api/executions', undefined, bearer(unknown))).status).toBe(401);
  });
});

describe('gateway: identity headers from clients', () => {
  it('drops a spoofed x-svc-identity: the caller keeps its own identity, and none is no one', async () => {
    const exp = Math.floor(Date.now() / 1000) + 60;
    // Even one signed with the right key (as if it leaked) is not passed on by the gateway.
    const spoof = { 'x-svc-identity': signIdentity({ sub: 'root', role: 'admin', exp, req: 'GET /api/executions', body: bodyDigest(undefined) }, TEST_GATEWAY_SECRET) };
    const anonymous = await http(gw.url, 'GET', '/api/executions', undefined, spoof);
    expect(anonymous.status).toBe(401);
    const viewer = await as('program-viewer');
    const escalated = await http(gw.url, 'POST', '/api/credentials', { name: 'y_auth', type: 'bearer', data: { token: 'y' } }, { ...viewer, ...spoof });
    expect(escalated.status).toBe(403);
    expect(escalated.body.detail).toContain('program-viewer');
    const apiViewer = await createApiToken(stack.deps.db, 'gw-viewer-2', 'viewer');
    secrets.push(apiViewer);
    const viaToken = await http(gw.url, 'POST', '/api/credentials', { name: 'z_auth', type: 'bearer', data: { token: 'z' } }, { ...bearer(apiViewer), ...spoof });
    expect(viaToken.status).toBe(403);
  });

  it('the server refuses a request that bypasses the gateway', async () => {
    const res = await http(stack.url, 'GET', '/api/executions');
    expect(res.status).toBe(401);
  });
});

describe('gateway: logs', () => {
  it('hold no token, secret or cookie value, and an audit line for each state-changing request', async () => {
    const all = [...gw.logs, ...stack.logs].join('\n');
    expect(secrets.length).toBeGreaterThan(8);
    for (const s of secrets) expect(all.includes(s), `a secret (${s.slice(0, 6)}…) is in the logs`).toBe(false);
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/); // no JWT of any kind
    const audits = gw.logs.filter((l) => l.includes('"gateway audit"')).map((l) => JSON.parse(l).audit);
    expect(audits).toContainEqual(expect.objectContaining({ who: 'jwt:program-operator', method: 'POST', path: '/api/run/playbook', status: 200 }));
    expect(audits).toContainEqual(expect.objectContaining({ who: 'jwt:program-viewer', method: 'POST', path: '/api/run/playbook', status: 403 }));
    expect(audits.some((a) => /^api-token#[0-9a-f]{16}$/.test(a.who))).toBe(true);
  });
});
