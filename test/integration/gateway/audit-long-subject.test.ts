// Subjects as long as OpenID Connect allows (255 characters, Core 1.0 section 2) through the
// gateway: the server takes the identity the gateway asserts for them, and records who started;
// a longer one is refused by the gateway with a detail saying why, not by the server as a
// "malformed identity assertion".
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { API_AUDIENCE, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const PLAYBOOK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: hello, path: gw/long-sub }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  stack = await startTestStack({ workers: 0, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  gw = await startTestGateway(gatewayEnv(stack, idp, TEST_GATEWAY_SECRET));
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await stack?.close();
  await idp?.close();
});

/** A token of `sub` with `roles`, signed as the provider signs its tokens. */
async function tokenOf(sub: string, roles: string[]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ roles }).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' }).setIssuer(idp.issuer).setAudience(API_AUDIENCE).setSubject(sub).setIssuedAt(now).setExpirationTime(now + 300).sign(await importJWK(idp.signingKey, 'RS256'));
}

describe('gateway: long subjects', () => {
  it("lets a caller whose subject has OpenID Connect's 255 characters in, and records it as who started", async () => {
    const sub = `service-account:${'x'.repeat(255 - 'service-account:'.length)}`;
    const caller = bearer(await tokenOf(sub, ['operator', 'admin']));
    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK }, caller)).status).toBe(201);
    const run = await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/long-sub' }, caller);
    expect(run.status).toBe(200);
    const detail = await http(gw.url, 'GET', `/api/executions/${run.body.execution_id}`, undefined, caller);
    expect(detail.body.requested_by).toBe(sub);
    expect((await http(gw.url, 'GET', '/auth/me', undefined, caller)).body.sub).toBe(sub);
  });

  it('refuses a subject longer than that at the gateway, saying so (401, detail only)', async () => {
    const refused = await http(gw.url, 'GET', '/api/executions', undefined, bearer(await tokenOf('y'.repeat(256), ['viewer'])));
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ detail: "the token's subject is longer than 255 characters (OpenID Connect's limit)" });
  });
});
