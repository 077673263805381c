// The provider's signing keys (JWKS) as the gateway holds them: a key the provider removed stops
// counting within a minute (docs/gateway.md, "Programs: bearer tokens"); while the provider cannot
// be reached the last key set it served stands; and one whose keys were never had is a 503 with a
// detail, never a 500 or a refusal of the token. A key the provider just rotated in counts within
// JWKS_COOLDOWN_MS (jose's default, 30 s, refused it for as long as the key set's whole age), and
// a flood of tokens naming unknown keys fetches the keys at most once per JWKS_COOLDOWN_MS.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer } from '../../helpers/auth.ts';
import { JWKS_COOLDOWN_MS } from '../../../src/gateway/identity-provider.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';

const AUDIENCE = 'svc-api';
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** A provider of discovery and keys only: `keys` is what its JWKS serves right now, `fetches` how often it was asked. */
async function startKeysProvider(): Promise<{ issuer: string; server: Server; keys: JWK[]; fetches: number }> {
  const state = { keys: [] as JWK[], fetches: 0 };
  const server = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') {
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }));
    } else {
      state.fetches++;
      res.end(JSON.stringify({ keys: state.keys }));
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return Object.assign(state, { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server });
}

const publicJwk = async (pair: KeyPair, kid: string): Promise<JWK> => ({ ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' });

/** A token of `sub` signed with `pair` under `kid`, valid five minutes from the real clock. */
function tokenOf(issuer: string, pair: KeyPair, kid: string, sub: string): Promise<string> {
  const now = Math.floor(new Date().getTime() / 1000);
  return new SignJWT({ roles: ['viewer'] }).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(issuer).setAudience(AUDIENCE).setSubject(sub).setIssuedAt(now).setExpirationTime(now + 300).sign(pair.privateKey);
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createMigratedDatabase();
}, 60_000);
afterAll(async () => {
  await database?.drop();
});
afterEach(() => vi.restoreAllMocks());

async function gatewayFor(issuer: string): Promise<TestGateway> {
  return startTestGateway({
    SVC_SERVER_URL: 'http://127.0.0.1:1',
    SVC_DATABASE_URL: database.url,
    SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET,
    SVC_OIDC_ISSUER: issuer,
    SVC_OIDC_CLIENT_ID: 'svc-gateway',
    SVC_OIDC_CLIENT_SECRET: 'gateway-client-secret-0123456789',
    SVC_OIDC_AUDIENCE: AUDIENCE,
  });
}

describe("gateway: the provider's signing keys", () => {
  it('stops taking a key the provider removed from its JWKS within a minute, even a token verified just before', async () => {
    const idp = await startKeysProvider();
    const old: KeyPair = await generateKeyPair('RS256', { extractable: true });
    const next: KeyPair = await generateKeyPair('RS256', { extractable: true });
    idp.keys = [await publicJwk(old, 'old')];
    const gw = await gatewayFor(idp.issuer);
    try {
      const start = Date.now();
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(await tokenOf(idp.issuer, old, 'old', 'first')))).status).toBe(200);
      // The key is rotated out (a leak, say); a token signed with it shortly after still gets in
      // (the keys were just fetched), and is remembered.
      idp.keys = [await publicJwk(next, 'next')];
      const late = await tokenOf(idp.issuer, old, 'old', 'late');
      vi.spyOn(Date, 'now').mockImplementation(() => start + 20_000);
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(late))).status).toBe(200);
      // A minute after the key went, neither that token nor a new one signed with it counts.
      vi.spyOn(Date, 'now').mockImplementation(() => start + 61_000);
      for (const token of [late, await tokenOf(idp.issuer, old, 'old', 'later')]) {
        const refused = await http(gw.url, 'GET', '/api/executions', undefined, bearer(token));
        expect(refused.status).toBe(401);
        expect(refused.body).toEqual({ detail: "the token's signature does not verify" });
      }
      // The new key counts.
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(await tokenOf(idp.issuer, next, 'next', 'new'))))).toMatchObject({ status: 200, body: { sub: 'new' } });
    } finally {
      await gw.close();
      idp.server.close();
    }
  });

  it('takes a token signed with a key just rotated in within the cooldown; unknown keys fetch the set at most once per cooldown', async () => {
    const idp = await startKeysProvider();
    const old: KeyPair = await generateKeyPair('RS256', { extractable: true });
    const next: KeyPair = await generateKeyPair('RS256', { extractable: true });
    const stranger: KeyPair = await generateKeyPair('RS256', { extractable: true });
    idp.keys = [await publicJwk(old, 'old')];
    const gw = await gatewayFor(idp.issuer);
    try {
      const start = Date.now();
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(await tokenOf(idp.issuer, old, 'old', 'first')))).status).toBe(200);
      expect(idp.fetches).toBe(1);
      // The provider rotates a key in and signs with it at once: refused only until the cooldown ends.
      idp.keys = [await publicJwk(old, 'old'), await publicJwk(next, 'next')];
      const rotated = await tokenOf(idp.issuer, next, 'next', 'rotated');
      expect((await http(gw.url, 'GET', '/api/executions', undefined, bearer(rotated))).status).toBe(401);
      expect(idp.fetches).toBe(1);
      vi.spyOn(Date, 'now').mockImplementation(() => start + JWKS_COOLDOWN_MS + 100);
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(rotated)))).toMatchObject({ status: 200, body: { sub: 'rotated' } });
      expect(idp.fetches).toBe(2);
      // A flood of tokens naming a key the provider never served: no fetch within the cooldown, one after it.
      const flood = async () => {
        const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => http(gw.url, 'GET', '/api/executions', undefined, bearer(await tokenOf(idp.issuer, stranger, 'stranger', `s${i}`)))));
        for (const a of answers) expect(a.status).toBe(401);
      };
      await flood();
      expect(idp.fetches).toBe(2);
      vi.spyOn(Date, 'now').mockImplementation(() => start + 2 * JWKS_COOLDOWN_MS + 200);
      await flood();
      expect(idp.fetches).toBe(3);
    } finally {
      await gw.close();
      idp.server.close();
    }
  });

  it('keeps the last key set the provider served while it cannot be reached: an outage refuses no good token', async () => {
    const idp = await startKeysProvider();
    const pair: KeyPair = await generateKeyPair('RS256', { extractable: true });
    const other: KeyPair = await generateKeyPair('RS256', { extractable: true });
    idp.keys = [await publicJwk(pair, 'k')];
    const gw = await gatewayFor(idp.issuer);
    try {
      const start = Date.now();
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(await tokenOf(idp.issuer, pair, 'k', 'before'))))).toMatchObject({ status: 200, body: { sub: 'before' } });
      await new Promise<void>((ok) => {
        idp.server.closeAllConnections();
        idp.server.close(() => ok());
      });
      // Past the key set's age (and the verified tokens' memory): the fetch fails, the last set stands.
      vi.spyOn(Date, 'now').mockImplementation(() => start + 45_000);
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(await tokenOf(idp.issuer, pair, 'k', 'during'))))).toMatchObject({ status: 200, body: { sub: 'during' } });
      // A key it never served is still no key.
      const stranger = await http(gw.url, 'GET', '/api/executions', undefined, bearer(await tokenOf(idp.issuer, other, 'x', 'stranger')));
      expect(stranger.status).toBe(401);
    } finally {
      await gw.close();
      idp.server.close();
    }
  });

  it('answers 503 with a detail, not 500, when the provider cannot be reached for its keys; the token counts once it is back', async () => {
    const idp = await startKeysProvider();
    const pair: KeyPair = await generateKeyPair('RS256', { extractable: true });
    idp.keys = [await publicJwk(pair, 'k')];
    const gw = await gatewayFor(idp.issuer);
    const port = (idp.server.address() as AddressInfo).port;
    try {
      const token = await tokenOf(idp.issuer, pair, 'k', 'prog');
      // Discovery loaded; the keys are fetched at the first token, and the provider is gone by then.
      await new Promise<void>((ok) => {
        idp.server.closeAllConnections();
        idp.server.close(() => ok());
      });
      const down = await http(gw.url, 'GET', '/api/executions', undefined, bearer(token));
      expect(down.status).toBe(503);
      expect(Object.keys(down.body)).toEqual(['detail']);
      expect(JSON.stringify(down.body)).toContain('identity provider');
      expect(JSON.stringify(down.body)).not.toContain(token);
      expect(gw.logs.join('\n')).not.toContain(token);
      // Back on the same address: the token is verified (and the server, unreachable here, is a 502).
      await new Promise<void>((ok) => idp.server.listen(port, '127.0.0.1', ok));
      expect((await http(gw.url, 'GET', '/auth/me', undefined, bearer(token)))).toMatchObject({ status: 200, body: { sub: 'prog' } });
    } finally {
      await gw.close();
      idp.server.close();
    }
  });
});
