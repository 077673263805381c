import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bodyDigest, requestOf, signIdentity, verifyIdentity } from '../../../src/auth/identity-assertion.ts';

const SECRET = 'a-shared-secret-of-at-least-32-characters';
const NOW = 1_800_000_000;
const REQ = 'GET /api/executions';
const BODY = bodyDigest(undefined);

const signRaw = (claims: unknown, secret = SECRET): string => {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
};

describe('signIdentity / verifyIdentity', () => {
  it('round-trips an identity signed with the shared secret', () => {
    const header = signIdentity({ sub: 'alice@example.com', role: 'operator', exp: NOW + 60, req: REQ, body: BODY }, SECRET);
    expect(header).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyIdentity(header, SECRET, REQ, NOW)).toEqual({ ok: true, identity: { sub: 'alice@example.com', role: 'operator', exp: NOW + 60, req: REQ, body: BODY } });
  });

  it('refuses an assertion at or past its exp (epoch seconds)', () => {
    const header = signIdentity({ sub: 'a', role: 'admin', exp: NOW, req: REQ, body: BODY }, SECRET);
    expect(verifyIdentity(header, SECRET, REQ, NOW - 1).ok).toBe(true);
    expect(verifyIdentity(header, SECRET, REQ, NOW)).toEqual({ ok: false, reason: 'identity assertion has expired' });
  });

  it('refuses another secret, a changed body and a changed signature', () => {
    const header = signIdentity({ sub: 'a', role: 'viewer', exp: NOW + 60, req: REQ, body: BODY }, SECRET);
    expect(verifyIdentity(header, `${SECRET}x`, REQ, NOW)).toEqual({ ok: false, reason: 'identity assertion has a bad signature' });
    const [body, sig] = header.split('.');
    const promoted = Buffer.from(JSON.stringify({ sub: 'a', role: 'admin', exp: NOW + 60 })).toString('base64url');
    expect(verifyIdentity(`${promoted}.${sig}`, SECRET, REQ, NOW).ok).toBe(false);
    expect(verifyIdentity(`${body}.${sig.slice(0, -2)}AA`, SECRET, REQ, NOW).ok).toBe(false);
    expect(verifyIdentity(`${body}.`, SECRET, REQ, NOW).ok).toBe(false);
  });

  it('refuses an unknown role even when signed', () => {
    expect(verifyIdentity(signRaw({ sub: 'a', role: 'root', exp: NOW + 60, req: REQ, body: BODY }), SECRET, REQ, NOW)).toEqual({ ok: false, reason: 'identity assertion names an unknown role' });
  });

  it('refuses malformed headers and claims without throwing', () => {
    for (const header of [undefined, '', 'nodot', 'a.b.c', '.sig', 'x'.repeat(5000) + '.y']) {
      expect(verifyIdentity(header, SECRET, REQ, NOW)).toEqual({ ok: false, reason: expect.any(String) });
    }
    for (const claims of [{ role: 'admin', exp: NOW + 60 }, { sub: '', role: 'admin', exp: NOW + 60 }, { sub: 'a', role: 'admin', exp: 'soon' }, { sub: 'a', role: 'admin', exp: 1.5 }, [1, 2]]) {
      expect(verifyIdentity(signRaw(claims), SECRET, REQ, NOW)).toEqual({ ok: false, reason: 'malformed identity assertion' });
    }
    const notJson = Buffer.from('{not json').toString('base64url');
    expect(verifyIdentity(`${notJson}.${createHmac('sha256', SECRET).update(notJson).digest('base64url')}`, SECRET, REQ, NOW)).toEqual({ ok: false, reason: 'malformed identity assertion' });
  });

  it('binds an assertion to the request it was made for: another method or target is refused', () => {
    const header = signIdentity({ sub: 'a', role: 'admin', exp: NOW + 60, req: requestOf('get', '/api/executions?limit=5'), body: BODY }, SECRET);
    expect(verifyIdentity(header, SECRET, 'GET /api/executions?limit=5', NOW)).toEqual({ ok: true, identity: { sub: 'a', role: 'admin', exp: NOW + 60, req: 'GET /api/executions?limit=5', body: BODY } });
    for (const other of ['POST /api/executions?limit=5', 'GET /api/executions', 'DELETE /api/credentials/1', 'GET /api/executions?limit=50']) {
      expect(verifyIdentity(header, SECRET, other, NOW)).toEqual({ ok: false, reason: 'identity assertion was made for another request' });
    }
    // The binding is signed: changing it breaks the signature.
    const [, sig] = header.split('.');
    const moved = Buffer.from(JSON.stringify({ sub: 'a', role: 'admin', exp: NOW + 60, req: 'DELETE /api/credentials/1', body: BODY })).toString('base64url');
    expect(verifyIdentity(`${moved}.${sig}`, SECRET, 'DELETE /api/credentials/1', NOW)).toEqual({ ok: false, reason: 'identity assertion has a bad signature' });
  });

  it('refuses an assertion bound to no request or no body, however well signed', () => {
    expect(verifyIdentity(signRaw({ sub: 'a', role: 'admin', exp: NOW + 60, body: BODY }), SECRET, REQ, NOW)).toEqual({ ok: false, reason: 'identity assertion is bound to no request (its req claim is missing)' });
    expect(verifyIdentity(signRaw({ sub: 'a', role: 'admin', exp: NOW + 60, req: REQ }), SECRET, REQ, NOW)).toEqual({ ok: false, reason: 'identity assertion is bound to no request body (its body claim is missing)' });
  });

  it('digests a body as sent, none as the empty one', () => {
    expect(bodyDigest(undefined)).toBe(bodyDigest(Buffer.alloc(0)));
    expect(bodyDigest(Buffer.from('{"path":"a"}'))).not.toBe(bodyDigest(Buffer.from('{"path":"b"}')));
    expect(bodyDigest(undefined)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
