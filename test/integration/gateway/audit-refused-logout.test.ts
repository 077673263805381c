// "Each state-changing request, login and logout writes one log line `gateway audit`"
// (docs/gateway.md): a logout the CSRF rule refuses, and a callback with no login in progress, are
// such requests too, and write theirs, once; a logout that goes through writes one line as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { API_AUDIENCE, GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';

let database: TestDatabase;
let idp: TestProvider;
let gw: TestGateway;
beforeAll(async () => {
  database = await createMigratedDatabase();
  idp = await startTestProvider(['http://127.0.0.1:1']);
  gw = await startTestGateway({
    SVC_SERVER_URL: 'http://127.0.0.1:1',
    SVC_DATABASE_URL: database.url,
    SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET,
    SVC_OIDC_ISSUER: idp.issuer,
    SVC_OIDC_CLIENT_ID: GATEWAY_CLIENT_ID,
    SVC_OIDC_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
    SVC_OIDC_AUDIENCE: API_AUDIENCE,
  });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await idp?.close();
  await database?.drop();
});

type AuditLine = { who: string; method: string; path: string; status: number };
const audits = (): AuditLine[] => gw.logs.filter((l) => l.includes('"gateway audit"')).map((l) => JSON.parse(l).audit);

describe('gateway: audit lines of refused logins and logouts', () => {
  it('writes one for a logout another site sends (403), one for a callback with no login, and one for a logout that goes through', async () => {
    const sid = await gw.sessions!.create({ sub: 'sam', name: null, email: null, role: 'viewer', paths: null, idToken: undefined });
    const cookie = `svc_session=${sid}`;
    const before = audits().length;

    const post = await fetch(`${gw.url}/auth/logout`, { method: 'POST', headers: { cookie, origin: 'https://evil.example.test' } });
    expect(post.status).toBe(403);
    const get = await fetch(`${gw.url}/auth/logout`, { headers: { cookie, 'sec-fetch-site': 'cross-site' }, redirect: 'manual' });
    expect(get.status).toBe(403);
    const callback = await fetch(`${gw.url}/auth/callback?code=abc&state=def`, { redirect: 'manual' });
    expect(callback.status).toBe(400);
    const ok = await fetch(`${gw.url}/auth/logout`, { method: 'POST', headers: { cookie, origin: gw.url } });
    expect(ok.status).toBe(200);

    expect(audits().slice(before)).toEqual([
      expect.objectContaining({ who: 'anonymous', method: 'POST', path: '/auth/logout', status: 403 }),
      expect.objectContaining({ who: 'anonymous', method: 'GET', path: '/auth/logout', status: 403 }),
      expect.objectContaining({ who: 'anonymous', method: 'GET', path: '/auth/callback', status: 400 }),
      expect.objectContaining({ who: 'session:sam', method: 'POST', path: '/auth/logout', status: 200 }),
    ]);
    expect(gw.logs.join('\n')).not.toContain(sid);
  });
});
