// GET /auth/me with a bearer JWT the gateway refused (expired, another audience) or another
// scheme answered 'not logged in: log in at /auth/login, or send a bearer JWT', to a caller who
// had sent one, without the challenge: the API's routes name what is wrong with the credential,
// and /auth/me (what a program asks to learn who its token is) now does too.
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { API_AUDIENCE, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';

let idp: TestProvider;
let t: TestApp;
let gw: TestGateway;

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  t = await startTestApp({ SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET }, { batchProcessors: false });
  gw = await startTestGateway(gatewayEnv(t, idp, TEST_GATEWAY_SECRET));
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await t?.close();
  await idp?.close();
});

/** A viewer program's token as the provider signs them, expiring `inS` from now, for `audience`. */
async function tokenOf(inS: number, audience = API_AUDIENCE): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ roles: ['viewer'] }).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' }).setIssuer(idp.issuer).setAudience(audience).setSubject('program-viewer').setIssuedAt(now - 600).setExpirationTime(now + inS).sign(await importJWK(idp.signingKey, 'RS256'));
}

describe('gateway: /auth/me with a refused credential', () => {
  it('says what is wrong with it, with the invalid_token challenge, as the API does', async () => {
    const refused: Record<string, [Record<string, string>, string]> = {
      expired: [bearer(await tokenOf(-300)), 'the token has expired'],
      'another audience': [bearer(await tokenOf(300, 'someone-else')), "the token's aud claim is not accepted"],
      'another scheme': [{ authorization: 'Basic dXNlcjpwYXNz' }, 'the Authorization header is not a Bearer token'],
    };
    for (const [what, [headers, detail]] of Object.entries(refused)) {
      const me = await http(gw.url, 'GET', '/auth/me', undefined, headers);
      expect(me.status, what).toBe(401);
      expect(me.body, what).toEqual({ detail });
      expect(me.headers.get('www-authenticate'), what).toBe('Bearer error="invalid_token"');
      // The same words as the API's for the same credential.
      expect((await http(gw.url, 'GET', '/api/executions', undefined, headers)).body, what).toEqual({ detail });
    }
  });

  it('still tells a caller without one to log in, with the challenge, and answers a good token', async () => {
    const anonymous = await http(gw.url, 'GET', '/auth/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.detail).toContain('not logged in');
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    const me = await http(gw.url, 'GET', '/auth/me', undefined, bearer(await tokenOf(300)));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ sub: 'program-viewer', roles: ['viewer'] });
  });
});
