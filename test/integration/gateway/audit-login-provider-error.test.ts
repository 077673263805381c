// A login the provider refused came back to the callback as 401 'login failed: authorization
// response from the server is an error' (or '... an error in the response body' from the token
// endpoint): the provider's own answer (access_denied, the person cancelled; invalid_grant), which
// says what happened, was in neither the detail nor the gateway's log line. The callback is sent
// as the provider would send it, with the state of a login this browser began.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';

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

/** Begins a login: the login cookie and the state the provider would send back. */
async function beginLogin(): Promise<{ cookie: string; state: string }> {
  const login = await fetch(`${gw.url}/auth/login`, { redirect: 'manual' });
  expect(login.status).toBe(302);
  const state = new URL(String(login.headers.get('location'))).searchParams.get('state');
  return { cookie: String(login.headers.get('set-cookie')).split(';')[0], state: String(state) };
}

const callback = async (params: Record<string, string>, cookie: string) => http(gw.url, 'GET', `/auth/callback?${new URLSearchParams({ ...params, iss: idp.issuer })}`, undefined, { cookie });

describe('gateway: a login the provider refused', () => {
  it("says the provider's error and its description, in the answer and the log", async () => {
    const denied = await beginLogin();
    const res = await callback({ error: 'access_denied', error_description: 'End-User aborted interaction', state: denied.state }, denied.cookie);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: 'login failed: the identity provider answered access_denied (End-User aborted interaction); start again at /auth/login' });
    expect(gw.logs.join('')).toContain('access_denied (End-User aborted interaction)');
    // The token endpoint's refusal of a code it never issued.
    const forged = await beginLogin();
    const grant = await callback({ code: 'a-code-the-provider-never-issued', state: forged.state }, forged.cookie);
    expect(grant.status).toBe(401);
    expect(grant.body.detail).toMatch(/^login failed: the identity provider answered invalid_grant/);
  });
});
