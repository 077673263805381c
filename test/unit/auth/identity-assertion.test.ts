import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signIdentity, verifyIdentity } from '../../../src/auth/identity-assertion.ts';

const SECRET = 'a-shared-secret-of-at-least-32-characters';
const NOW = 1_800_000_000;

const signRaw = (claims: unknown, secret = SECRET): string => {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
};

describe('signIdentity / verifyIdentity', () => {
  it('round-trips an identity signed with the shared secret', () => {
    const header = signIdentity({ sub: 'alice@example.com', role: 'operator', exp: NOW + 60 }, SECRET);
    expect(header).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyIdentity(header, SECRET, NOW)).toEqual({ ok: true, identity: { sub: 'alice@example.com', role: 'operator', exp: NOW + 60 } });
  });

  it('refuses an assertion at or past its exp (epoch seconds)', () => {
    const header = signIdentity({ sub: 'a', role: 'admin', exp: NOW }, SECRET);
    expect(verifyIdentity(header, SECRET, NOW - 1).ok).toBe(true);
    expect(verifyIdentity(header, SECRET, NOW)).toEqual({ ok: false, reason: 'identity assertion has expired' });
  });

  it('refuses another secret, a changed body and a changed signature', () => {
    const header = signIdentity({ sub: 'a', role: 'viewer', exp: NOW + 60 }, SECRET);
    expect(verifyIdentity(header, `${SECRET}x`, NOW)).toEqual({ ok: false, reason: 'identity assertion has a bad signature' });
    const [body, sig] = header.split('.');
    const promoted = Buffer.from(JSON.stringify({ sub: 'a', role: 'admin', exp: NOW + 60 })).toString('base64url');
    expect(verifyIdentity(`${promoted}.${sig}`, SECRET, NOW).ok).toBe(false);
    expect(verifyIdentity(`${body}.${sig.slice(0, -2)}AA`, SECRET, NOW).ok).toBe(false);
    expect(verifyIdentity(`${body}.`, SECRET, NOW).ok).toBe(false);
  });

  it('refuses an unknown role even when signed', () => {
    expect(verifyIdentity(signRaw({ sub: 'a', role: 'root', exp: NOW + 60 }), SECRET, NOW)).toEqual({ ok: false, reason: 'identity assertion names an unknown role' });
  });

  it('refuses malformed headers and claims without throwing', () => {
    for (const header of [undefined, '', 'nodot', 'a.b.c', '.sig', 'x'.repeat(5000) + '.y']) {
      expect(verifyIdentity(header, SECRET, NOW)).toEqual({ ok: false, reason: expect.any(String) });
    }
    for (const claims of [{ role: 'admin', exp: NOW + 60 }, { sub: '', role: 'admin', exp: NOW + 60 }, { sub: 'a', role: 'admin', exp: 'soon' }, { sub: 'a', role: 'admin', exp: 1.5 }, [1, 2]]) {
      expect(verifyIdentity(signRaw(claims), SECRET, NOW)).toEqual({ ok: false, reason: 'malformed identity assertion' });
    }
    const notJson = Buffer.from('{not json').toString('base64url');
    expect(verifyIdentity(`${notJson}.${createHmac('sha256', SECRET).update(notJson).digest('base64url')}`, SECRET, NOW)).toEqual({ ok: false, reason: 'malformed identity assertion' });
  });
});
