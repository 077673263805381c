// People's login cookies (the login's state, the session) are Secure on any origin but plain-http
// loopback, and a browser keeps no Secure cookie from plain http: a gateway at http://gw.example.test
// started, answered /auth/login 302 with `__Secure-svc_login=...; Secure`, and every login ended at
// the callback in 400 "no login in progress (it expired, or cookies are off)". Now refused: at start
// (GATEWAY_PUBLIC_URL), or at /auth/login (an origin taken from the Host), 400 naming the fix.
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { API_AUDIENCE, GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';

let database: TestDatabase & { db: Db };
let idp: TestProvider;
let gw: TestGateway | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createMigratedDatabase();
  idp = await startTestProvider(['http://127.0.0.1:1']);
  env = {
    SVC_SERVER_URL: 'http://127.0.0.1:1',
    SVC_DATABASE_URL: database.url,
    SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET,
    SVC_OIDC_ISSUER: idp.issuer,
    SVC_OIDC_CLIENT_ID: GATEWAY_CLIENT_ID,
    SVC_OIDC_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
    SVC_OIDC_AUDIENCE: API_AUDIENCE,
  };
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await idp?.close();
  await database?.drop();
});

/** GET `path` at the gateway as if reached by the name `host`: status, Set-Cookie and body. */
function get(path: string, host: string): Promise<{ status: number; cookies: string[]; body: string }> {
  const u = new URL(gw!.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cookies: res.headers['set-cookie'] ?? [], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const logins = async (): Promise<number> => (await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM core.gateway_login')).rows[0].n;

it('refuses at start a plain-http public origin that is not loopback, and a login at one taken from the Host', async () => {
  await expect(startTestGateway({ ...env, GATEWAY_PUBLIC_URL: 'https://svc.example.test,http://gw.example.test' })).rejects.toThrow(
    /GATEWAY_PUBLIC_URL http:\/\/gw\.example\.test is plain http on a host that is not loopback/,
  );

  gw = await startTestGateway(env);
  const port = new URL(gw.url).port;
  const plain = await get('/auth/login', `gw.example.test:${port}`);
  expect(plain.status).toBe(400);
  expect(JSON.parse(plain.body).detail).toMatch(/^people log in only over https .* from http:\/\/gw\.example\.test:\d+/);
  expect(plain.cookies).toEqual([]);
  expect(await logins()).toBe(0);

  // On loopback, plain http is local development: the login starts, its cookie not Secure.
  const local = await get('/auth/login', `127.0.0.1:${port}`);
  expect(local.status).toBe(302);
  expect(local.cookies.join(';')).toMatch(/^svc_login=[A-Za-z0-9_-]{43};/);
  expect(local.cookies.join(';')).not.toMatch(/secure/i);
  expect(await logins()).toBe(1);
});
