// A server that refuses the identity its gateway asserts (the two hold different
// SVC_GATEWAY_SECRETs, or clocks more than the assertion's 60 s apart) answered every request of
// a person or program 401 'identity assertion has a bad signature', passed on as it came: a
// program read its good token as refused, and the console, which sends its person to log in on
// any 401, went round the provider's login for ever. The gateway now answers such a refusal 502
// naming the setting; a 401 the server gives the caller itself (a worker route) stays a 401.
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { API_AUDIENCE, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';

let idp: TestProvider;
let t: TestApp;
let matched: TestGateway;
let mismatched: TestGateway;

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  t = await startTestApp({ SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET }, { batchProcessors: false });
  matched = await startTestGateway(gatewayEnv(t, idp, TEST_GATEWAY_SECRET));
  mismatched = await startTestGateway(gatewayEnv(t, idp, 'another-gateway-secret-0123456789-abcdefghij'));
}, 60_000);
afterAll(async () => {
  await matched?.close();
  await mismatched?.close();
  await t?.close();
  await idp?.close();
});

/** A viewer program's bearer JWT, signed as the provider signs its tokens. */
async function viewerToken(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ roles: ['viewer'] }).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' }).setIssuer(idp.issuer).setAudience(API_AUDIENCE).setSubject('program-viewer').setIssuedAt(now).setExpirationTime(now + 300).sign(await importJWK(idp.signingKey, 'RS256'));
}

describe('gateway: the server refuses the identity the gateway asserts', () => {
  it('answers 502 naming SVC_GATEWAY_SECRET, to a bearer JWT and to a session alike, never the 401 that sends a person to log in', async () => {
    const sid = await mismatched.sessions!.create({ sub: 'victor', name: null, email: null, role: 'viewer', paths: null, idToken: undefined });
    const callers = { jwt: bearer(await viewerToken()), session: { cookie: `svc_session=${sid}` } };
    for (const [who, headers] of Object.entries(callers)) {
      const res = await http(mismatched.url, 'GET', '/api/executions', undefined, headers);
      expect(res.status, who).toBe(502);
      expect(res.body, who).toEqual({ detail: expect.stringContaining('identity assertion has a bad signature') });
      expect(res.body.detail, who).toContain('SVC_GATEWAY_SECRET');
      expect(res.headers.get('www-authenticate'), who).toBeNull();
      expect(res.headers.get('x-svc-identity-refused'), who).toBeNull();
    }
    // The gateway's log says it too, for its operator.
    expect(mismatched.logs.join('')).toContain('identity assertion has a bad signature');
  });

  it('passes an API token on as ever, and the server\'s own 401 to a caller it identified', async () => {
    const token = await createApiToken(t.deps.db, 'assertion-refused-viewer', 'viewer');
    expect((await http(mismatched.url, 'GET', '/api/executions', undefined, bearer(token))).status).toBe(200);
    const jwt = bearer(await viewerToken());
    expect((await http(matched.url, 'GET', '/api/executions', undefined, jwt)).status).toBe(200);
    const workerRoute = await http(matched.url, 'POST', '/api/worker/pool/heartbeat', {}, jwt);
    expect(workerRoute.status).toBe(401);
    expect(workerRoute.body.detail).toContain('only the worker token');
  });
});
