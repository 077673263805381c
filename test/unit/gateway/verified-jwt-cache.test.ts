// Bearer JWT verification and its cache, with a local key set: a token is remembered only after
// it verified, and no longer than its `exp` or the cache's bound.
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { JWT_CLOCK_TOLERANCE_S, VERIFIED_JWT_CACHE_MS, VerifiedJwtCache, verifyBearerJwt, type JwtCheck } from '../../../src/gateway/bearer-jwt.ts';

async function setup() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const check: JwtCheck = { issuer: 'https://id.test', audience: 'api', algorithms: ['ES256'], clientId: 'gateway', keys: createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k' }] }) };
  const sign = (exp: number, aud = 'api', iat?: number) => {
    const jwt = new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k' }).setIssuer('https://id.test').setAudience(aud).setSubject('p').setExpirationTime(exp);
    return (iat === undefined ? jwt : jwt.setIssuedAt(iat)).sign(privateKey);
  };
  return { check, sign };
}

describe('VerifiedJwtCache', () => {
  it('remembers a good token until the bound, and never a refused one', async () => {
    const { check, sign } = await setup();
    let now = Date.now();
    const cache = new VerifiedJwtCache(() => now);
    const good = await sign(Math.floor(now / 1000) + 3600);
    expect((await cache.verify(good, check)).ok).toBe(true);
    // With a key set that knows no key, only a remembered token can pass.
    const noKeys: JwtCheck = { ...check, keys: createLocalJWKSet({ keys: [] }) };
    expect((await cache.verify(good, noKeys)).ok).toBe(true);
    now += VERIFIED_JWT_CACHE_MS + 1;
    expect((await cache.verify(good, noKeys)).ok).toBe(false);

    const wrongAud = await sign(Math.floor(now / 1000) + 3600, 'other');
    expect(await cache.verify(wrongAud, check)).toEqual({ ok: false, reason: "the token's aud claim is not accepted" });
    expect((await cache.verify(wrongAud, check)).ok).toBe(false);
  });

  it('forgets a token at its exp even within the bound', async () => {
    const { check, sign } = await setup();
    let now = Date.now();
    const cache = new VerifiedJwtCache(() => now);
    const soon = await sign(Math.floor(now / 1000) + 5);
    expect((await cache.verify(soon, check)).ok).toBe(true);
    now += 10_000;
    expect((await cache.verify(soon, { ...check, keys: createLocalJWKSet({ keys: [] }) })).ok).toBe(false);
    expect((await verifyBearerJwt(soon, check)).ok).toBe(true); // on the real clock it is still valid: the cache's clock passing exp refused it
  });

  it('refuses a token issued in the future beyond the clock tolerance, and takes one within it', async () => {
    const { check, sign } = await setup();
    const nowS = Math.floor(Date.now() / 1000);
    expect(await verifyBearerJwt(await sign(nowS + 7200, 'api', nowS + 3600), check)).toEqual({
      ok: false,
      reason: "the token's iat claim is in the future (check the provider's clock)",
    });
    expect((await verifyBearerJwt(await sign(nowS + 3600, 'api', nowS + JWT_CLOCK_TOLERANCE_S - 5), check)).ok).toBe(true);
    expect((await verifyBearerJwt(await sign(nowS + 3600, 'api', nowS - 60), check)).ok).toBe(true);
  });
});
