// The gateway's pure parts: roles from claims, the rate limiter's windows, return addresses,
// public origins per hostname. (Sessions live in PostgreSQL: test/integration/gateway/gateway-sessions.test.ts.)
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { safeReturnTo } from '../../../src/gateway/auth-routes.ts';
import { roleFromClaims } from '../../../src/gateway/claims-role.ts';
import { bodyPath, pathAllowed, pathPatterns, triggerStartPath } from '../../../src/gateway/playbook-paths.ts';
import { RateLimiter, RATE_WINDOW_MS } from '../../../src/rate-limit.ts';
import { cookiesSecure, gatewaySettings, publicOriginFor } from '../../../src/gateway/settings.ts';

const SECRET = 'g'.repeat(40);

describe('roleFromClaims', () => {
  const map = gatewaySettings(loadConfig({ SVC_GATEWAY_SECRET: SECRET, SVC_OIDC_ISSUER: 'https://id.example.test', SVC_OIDC_CLIENT_ID: 'c', SVC_OIDC_ROLE_MAP: 'svc-admin=admin, readers=viewer, ops=operator' })).oidc!.roleMap;
  it('maps the highest role found at a dotted path, in arrays or space-separated strings', () => {
    expect(roleFromClaims({ realm_access: { roles: ['readers', 'ops'] } }, ['realm_access', 'roles'], map)).toBe('operator');
    expect(roleFromClaims({ roles: 'readers svc-admin' }, ['roles'], map)).toBe('admin');
    expect(roleFromClaims({ roles: ['admin'] }, ['roles'], map)).toBeNull(); // not in this map
    expect(roleFromClaims({ roles: { readers: true } }, ['roles'], map)).toBeNull();
    expect(roleFromClaims({}, ['roles'], map)).toBeNull();
  });
});

describe('RateLimiter', () => {
  it('refuses past the limit with the seconds left in the window, per key', () => {
    let now = 0;
    const rl = new RateLimiter(2, () => now);
    expect(rl.hit('a').ok).toBe(true);
    expect(rl.hit('a').ok).toBe(true);
    now += 15_000;
    expect(rl.hit('a')).toEqual({ ok: false, retryAfterSeconds: 45 });
    expect(rl.hit('b').ok).toBe(true);
    now += RATE_WINDOW_MS;
    expect(rl.hit('a').ok).toBe(true);
  });

  it('over() says whether a key is past its limit without counting a request', () => {
    let now = 0;
    const rl = new RateLimiter(2, () => now);
    for (let i = 0; i < 5; i++) expect(rl.over('a').ok).toBe(true);
    rl.hit('a');
    expect(rl.over('a').ok).toBe(true);
    rl.hit('a');
    now += 20_000;
    expect(rl.over('a')).toEqual({ ok: false, retryAfterSeconds: 40 });
    now += 40_000;
    expect(rl.over('a').ok).toBe(true);
  });
});

describe('return addresses and origins', () => {
  it('returns only to paths on the gateway', () => {
    expect(safeReturnTo('/ui/x?y=1')).toBe('/ui/x?y=1');
    for (const bad of ['//evil.test', 'https://evil.test', '/\\evil.test', undefined, 42]) expect(safeReturnTo(bad)).toBe('/');
    // A browser drops tabs and newlines from a Location and reads \ as /: each of these is //evil.test to it.
    for (const bad of ['/\t/evil.test', '/\n/evil.test', '/\r\n/evil.test', '/\t\\evil.test', '/..//evil.test', '/./\\evil.test']) expect(safeReturnTo(bad), JSON.stringify(bad)).toBe('/');
    // A Location header carries no control or non-Latin-1 character: sent percent-encoded.
    expect(safeReturnTo('/ui/€?q=€#/executions/1')).toBe('/ui/%E2%82%AC?q=%E2%82%AC#/executions/1');
    expect(safeReturnTo('/#/executions/12?status=failed')).toBe('/#/executions/12?status=failed');
  });

  it('picks the public origin by Host, else the canonical one; Secure cookies but on loopback http', () => {
    const origins = ['https://a.example.test', 'https://b.example.test:8443'];
    expect(publicOriginFor(origins, 'b.example.test:8443', 'x')).toBe('https://b.example.test:8443');
    expect(publicOriginFor(origins, 'evil.test', 'x')).toBe('https://a.example.test');
    expect(publicOriginFor([], 'evil.test', 'http://127.0.0.1:8090')).toBe('http://127.0.0.1:8090');
    expect(cookiesSecure('http://127.0.0.1:8090')).toBe(false);
    expect(cookiesSecure('http://localhost:8090')).toBe(false);
    expect(cookiesSecure('http://gw.example.test')).toBe(true);
    expect(cookiesSecure('https://gw.example.test')).toBe(true);
  });

  it('refuses configuration that would weaken the gateway', () => {
    expect(() => gatewaySettings(loadConfig({}))).toThrow(/SVC_GATEWAY_SECRET/);
    expect(() => gatewaySettings(loadConfig({ SVC_GATEWAY_SECRET: SECRET, SVC_OIDC_ISSUER: 'https://id.example.test' }))).toThrow(/SVC_OIDC_CLIENT_ID/);
    expect(() => loadConfig({ SVC_OIDC_ALGORITHMS: 'RS256,HS256' })).toThrow(/SVC_OIDC_ALGORITHMS/);
    expect(() => loadConfig({ SVC_OIDC_ALGORITHMS: 'none' })).toThrow(/SVC_OIDC_ALGORITHMS/);
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://a.test/path' })).toThrow(/CORS_ALLOWED_ORIGINS/);
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: ' https://a.test , http://b.test:8080 ,' }).CORS_ALLOWED_ORIGINS).toEqual(['https://a.test', 'http://b.test:8080']);
    expect(() => gatewaySettings(loadConfig({ SVC_GATEWAY_SECRET: SECRET, SVC_OIDC_ISSUER: 'http://id.example.test', SVC_OIDC_CLIENT_ID: 'c' }))).toThrow(/https/);
  });
});

describe('playbook path patterns', () => {
  it('reads the claim only when configured and present; * stays in a segment, ** crosses them', () => {
    expect(pathPatterns({ p: ['a/*'] }, null)).toBeNull();
    expect(pathPatterns({}, ['p'])).toBeNull();
    expect(pathPatterns({ p: 'a/* b/**' }, ['p'])).toEqual(['a/*', 'b/**']);
    expect(pathPatterns({ p: 42 }, ['p'])).toEqual([]); // present but unreadable: nothing allowed
    expect(pathAllowed('a/x', ['a/*'])).toBe(true);
    expect(pathAllowed('a/x/y', ['a/*'])).toBe(false);
    expect(pathAllowed('b/x/y', ['b/**'])).toBe(true);
    expect(pathAllowed('a.x', ['a?x'])).toBe(false);
    expect(pathAllowed('anything', [])).toBe(false);
    expect(bodyPath(Buffer.from('{"path":"a/x"}'))).toBe('a/x');
    expect(bodyPath(Buffer.from('not json'))).toBeUndefined();
    expect(bodyPath(undefined)).toBeUndefined();
    expect(bodyPath(Buffer.from('\uFEFF{"path":"a/x"}'))).toBe('a/x');
    expect(triggerStartPath('a/b/nightly/fire')).toBe('a/b');
    expect(triggerStartPath('a/nightly/backfill')).toBe('a');
    expect(triggerStartPath('a/nightly/pause')).toBeUndefined();
  });
});
