// The streams the gateway relays end when their caller's credential does: a real gateway (two,
// sharing the sessions), a real OpenID provider's key, a real server (SVC_AUTH=gateway) and
// PostgreSQL, `ws` clients and fetch SSE readers. The gateway checked a caller only at the
// handshake and the server trusts its signed identity for the stream, so an inspection WebSocket
// or a batch's status stream went on after logout (here or at another gateway), a revocation, the
// session's expiry or the bearer JWT's `exp`. Now the WebSocket closes with 1008 naming why and the
// event stream ends with `: closed: <why>`, within GATEWAY_STREAM_CHECK_MS; the server itself does
// not cut a relayed stream when the gateway's 60 s identity assertion expires.
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKEN_CACHE_TTL_MS } from '../../../src/api/api-token-cache.ts';
import { STREAM_CALLER_CHECK_MS } from '../../../src/api/auth.ts';
import { bodyDigest, IDENTITY_HEADER, requestOf, signIdentity } from '../../../src/auth/identity-assertion.ts';
import { deleteGatewaySessionsOf } from '../../../src/db/gateway-session.repo.ts';
import { revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { GATEWAY_STREAM_CHECK_MS } from '../../../src/gateway/caller-watch.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer, createApiToken } from '../../helpers/auth.ts';
import { commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { openSocket, readEventStream, stillOpen, type Closed } from '../../helpers/stream-readers.ts';
import { API_AUDIENCE, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';

const WITHIN_MS = GATEWAY_STREAM_CHECK_MS + 1_500;
const SESSION_IDLE_MS = 3_000;

let idp: TestProvider;
let t: TestApp;
let gw: TestGateway;
let other: TestGateway;
let brief: TestGateway;
let executionId: number;
let requestId: string;

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  // No workers and no batch processors: the execution stays running, its batch accepted.
  t = await startTestApp({ SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.1' }, { batchProcessors: false });
  const env = gatewayEnv(t, idp, TEST_GATEWAY_SECRET);
  gw = await startTestGateway(env);
  other = await startTestGateway(env);
  // Sessions idle out after 3 s here (the environment takes no less than a minute).
  brief = await startTestGateway(env, 0, undefined, { sessionIdleMs: SESSION_IDLE_MS });
  const admin = bearer(await createApiToken(t.deps.db, 'admin', 'admin'));
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: noopPlaybook('lapse/gw', 2) }, admin)).status).toBe(201);
  const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'lapse/gw' }, admin);
  expect(run.status).toBe(200);
  executionId = run.body.execution_id;
  const cmd = await t.deps.db.query<{ command_id: string }>('SELECT command_id FROM core.command WHERE execution_id = $1', [executionId]);
  const claimed = await http(t.url, 'POST', `/api/commands/${cmd.rows[0].command_id}/claim`, { worker_id: 'w1' }, asWorker);
  expect(claimed.status).toBe(200);
  const batch = await http(t.url, 'POST', '/api/events/batch', { execution_id: executionId, worker_id: 'w1', events: commandReport(claimed.body) }, asWorker);
  expect(batch.status).toBe(202);
  requestId = batch.body.request_id;
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await other?.close();
  await brief?.close();
  await t?.close();
  await idp?.close();
});


/** Opens the inspection stream at `base` with `headers`; resolves once its first message came, with how it closes later. */
async function openInspection(base: string, headers: Record<string, string>): Promise<{ closed: Promise<Closed> }> {
  return { closed: (await openSocket(`${base}/api/executions/${executionId}/inspect`, headers)).closed };
}

/** Opens the batch's status stream at `base` with `headers`: its text as it grows, and when it ended. */
async function openStatusStream(base: string, headers: Record<string, string>): Promise<{ text: () => string; ended: Promise<number> }> {
  const res = await fetch(`${base}/api/events/batch/${requestId}/stream`, { headers });
  expect(res.status).toBe(200);
  return readEventStream(res);
}

/** A session as login makes it, on `g` (shared by every gateway on the database); the headers of the GUI's requests with it. */
async function session(g: TestGateway, sub: string): Promise<{ sid: string; headers: Record<string, string> }> {
  const sid = await g.sessions!.create({ sub, name: null, email: null, role: 'viewer', paths: null, idToken: undefined });
  return { sid, headers: { cookie: `svc_session=${sid}`, origin: new URL(g.url).origin } };
}

/** A bearer JWT as the provider signs them, for a viewer program, expiring `inS` seconds from now. */
async function jwtExpiringIn(inS: number): Promise<{ token: string; exp: number }> {
  const now = Math.floor(Date.now() / 1000);
  const exp = now + inS;
  const token = await new SignJWT({ roles: ['viewer'] })
    .setProtectedHeader({ alg: 'RS256', kid: String(idp.signingKey.kid), typ: 'at+jwt' })
    .setIssuer(idp.issuer)
    .setAudience(API_AUDIENCE)
    .setSubject('program-brief')
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(await importJWK(idp.signingKey, 'RS256'));
  return { token, exp };
}

describe('gateway: the inspection WebSocket', () => {
  it('stays open for a live session, and closes with 1008 once it logs out', async () => {
    const { headers } = await session(gw, 'ada');
    const { closed } = await openInspection(gw.url, headers);
    expect(await stillOpen(closed, 2 * GATEWAY_STREAM_CHECK_MS + 500)).toBe(true);
    expect((await http(gw.url, 'POST', '/auth/logout', undefined, headers)).status).toBe(200);
    const loggedOutAt = Date.now();
    const end = await closed;
    expect(end).toMatchObject({ code: 1008, reason: 'the session has ended (logged out, revoked or expired)' });
    expect(end.at - loggedOutAt).toBeLessThan(WITHIN_MS);
  });

  it('closes once the session is ended at another gateway, or revoked (`svc gateway revoke`)', async () => {
    const a = await session(gw, 'bea');
    const { closed: closedA } = await openInspection(gw.url, a.headers);
    expect((await http(other.url, 'POST', '/auth/logout', undefined, { cookie: a.headers.cookie, origin: new URL(other.url).origin })).status).toBe(200);
    expect(await closedA).toMatchObject({ code: 1008, reason: expect.stringMatching(/session has ended/) });

    const b = await session(gw, 'cy');
    const { closed: closedB } = await openInspection(gw.url, b.headers);
    expect(await deleteGatewaySessionsOf(t.deps.db, 'cy')).toBe(1);
    const revokedAt = Date.now();
    const end = await closedB;
    expect(end.code).toBe(1008);
    expect(end.at - revokedAt).toBeLessThan(WITHIN_MS);
  });

  it('closes once the session idles out: an open stream does not renew it', async () => {
    const { headers } = await session(brief, 'dee');
    const openedAt = Date.now();
    const end = await (await openInspection(brief.url, headers)).closed;
    expect(end.code).toBe(1008);
    expect(end.at - openedAt).toBeGreaterThanOrEqual(SESSION_IDLE_MS - 100);
    expect(end.at - openedAt).toBeLessThan(SESSION_IDLE_MS + WITHIN_MS);
  });

  it("closes with 1008 at the bearer JWT's exp", async () => {
    const { token, exp } = await jwtExpiringIn(3);
    const end = await (await openInspection(gw.url, bearer(token))).closed;
    expect(end).toMatchObject({ code: 1008, reason: 'the bearer token has expired' });
    expect(end.at).toBeGreaterThanOrEqual(exp * 1000 - 50);
    expect(end.at - exp * 1000).toBeLessThan(1_500);
  });

  it("passes on the server's 1008 when an API token passed through is revoked", async () => {
    const token = await createApiToken(t.deps.db, 'gw-stream', 'viewer');
    const { closed } = await openInspection(gw.url, bearer(token));
    await revokeApiToken(t.deps.db, 'gw-stream');
    const revokedAt = Date.now();
    const end = await closed;
    expect(end).toMatchObject({ code: 1008, reason: 'the API token is unknown or revoked' });
    expect(end.at - revokedAt).toBeLessThan(API_TOKEN_CACHE_TTL_MS + STREAM_CALLER_CHECK_MS + 1_500);
  });
});

describe("gateway: a batch's status stream", () => {
  it('ends with a `: closed:` line once the session logs out', async () => {
    const { headers } = await session(gw, 'eve');
    const stream = await openStatusStream(gw.url, headers);
    expect(await stillOpen(stream.ended, 2 * GATEWAY_STREAM_CHECK_MS + 500)).toBe(true);
    expect(stream.text()).toMatch(/^id: 1\nevent: status\n/);
    expect((await http(gw.url, 'POST', '/auth/logout', undefined, headers)).status).toBe(200);
    const loggedOutAt = Date.now();
    const endedAt = await stream.ended;
    expect(endedAt - loggedOutAt).toBeLessThan(WITHIN_MS);
    expect(stream.text().endsWith(': closed: the session has ended (logged out, revoked or expired)\n\n')).toBe(true);
  });

  it("ends at the bearer JWT's exp", async () => {
    const { token, exp } = await jwtExpiringIn(3);
    const stream = await openStatusStream(gw.url, bearer(token));
    const endedAt = await stream.ended;
    expect(endedAt - exp * 1000).toBeLessThan(1_500);
    expect(stream.text().endsWith(': closed: the bearer token has expired\n\n')).toBe(true);
  });
});

describe('the server behind the gateway', () => {
  it("does not cut a stream when the gateway's identity assertion expires: the gateway polices it", async () => {
    const identity = (target: string) => ({ [IDENTITY_HEADER]: signIdentity({ sub: 'relayed', role: 'viewer', exp: Math.floor(Date.now() / 1000) + 2, req: requestOf('GET', target), body: bodyDigest(undefined) }, TEST_GATEWAY_SECRET) });
    const { closed } = await openInspection(t.url, identity(`/api/executions/${executionId}/inspect`));
    const stream = await openStatusStream(t.url, identity(`/api/events/batch/${requestId}/stream`));
    expect(await stillOpen(Promise.race([closed, stream.ended]), 2_000 + 3 * STREAM_CALLER_CHECK_MS)).toBe(true);
  });
});
