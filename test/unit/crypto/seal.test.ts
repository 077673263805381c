import { createSecretKey, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyring } from '../../../src/crypto/keyring.ts';
import { credentialAad, keychainAad, open, seal, SealError, sealedKeyId } from '../../../src/crypto/seal.ts';

const ring = createKeyring(randomBytes(32), []);
const secret = { user: 'svc', password: 'hunter2-very-secret', port: 5432, nested: { list: [1, 'two', null] } };
const aad = credentialAad('pg_auth');

function expectSealError(fn: () => unknown, message?: string | RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(SealError);
  if (caught instanceof SealError) {
    expect(caught.message).toMatch(/^cannot open sealed value: /);
    expect(caught.message).not.toContain('hunter2');
    if (message !== undefined) expect(caught.message).toMatch(message);
  }
}

describe('AAD helpers', () => {
  it('prefix the row identity', () => {
    expect(credentialAad('pg_auth')).toBe('credential:pg_auth');
    expect(keychainAad('api:7:global')).toBe('keychain:api:7:global');
  });
});

describe('seal / open', () => {
  it('round-trips JSON values', () => {
    for (const value of [secret, 'text', 42, 1.5, true, null, [], {}, ['é', { '': '' }]]) {
      expect(open(ring, seal(ring, value, aad), aad)).toEqual(value);
    }
  });

  it('has the v1.<kid>.<nonce>.<ciphertext>.<tag> layout with a 96-bit nonce and 16-byte tag', () => {
    const sealed = seal(ring, secret, aad);
    const parts = sealed.split('.');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v1');
    expect(parts[1]).toBe(ring.currentKid);
    expect(Buffer.from(parts[2], 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[4], 'base64url')).toHaveLength(16);
    for (const part of parts.slice(2)) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('hunter2');
    expect(sealedKeyId(sealed)).toBe(ring.currentKid);
  });

  it('uses a fresh nonce per call', () => {
    const a = seal(ring, secret, aad);
    const b = seal(ring, secret, aad);
    expect(a).not.toBe(b);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
    expect(a.split('.')[3]).not.toBe(b.split('.')[3]);
  });

  it('refuses values JSON cannot hold, without quoting them', () => {
    expect(() => seal(ring, undefined, aad)).toThrow('cannot seal value: it is not JSON-serialisable');
    expect(() => seal(ring, 10n, aad)).toThrow(TypeError);
    const circular: Record<string, unknown> = { password: 'hunter2-very-secret' };
    circular.self = circular;
    expect(() => seal(ring, circular, aad)).toThrow('cannot seal value: it is not JSON-serialisable');
  });

  it('fails on a change to any single character of any part', () => {
    const sealed = seal(ring, secret, aad);
    // Every position, swapped for another character of the same alphabet.
    for (let i = 0; i < sealed.length; i++) {
      const c = sealed[i];
      if (c === '.') continue;
      const replacement = c === 'A' ? 'B' : 'A';
      const tampered = sealed.slice(0, i) + replacement + sealed.slice(i + 1);
      expectSealError(() => open(ring, tampered, aad));
    }
  });

  it('fails on truncated, extended or re-assembled text', () => {
    const sealed = seal(ring, secret, aad);
    const parts = sealed.split('.');
    const other = seal(ring, { other: true }, aad).split('.');
    expectSealError(() => open(ring, sealed.slice(0, -1), aad));
    expectSealError(() => open(ring, `${sealed}A`, aad));
    expectSealError(() => open(ring, `${sealed}.x`, aad), /malformed text/);
    expectSealError(() => open(ring, parts.slice(0, 4).join('.'), aad), /malformed text/);
    expectSealError(() => open(ring, ['v2', ...parts.slice(1)].join('.'), aad), /unsupported format version/);
    // Ciphertext of one seal with the tag of another.
    expectSealError(() => open(ring, [...parts.slice(0, 4), other[4]].join('.'), aad), /authentication failed/);
    expectSealError(() => open(ring, [...parts.slice(0, 3), other[3], parts[4]].join('.'), aad), /authentication failed/);
    expectSealError(() => open(ring, '', aad));
  });

  it('fails when the ciphertext is moved to another row (aad mismatch)', () => {
    const sealed = seal(ring, secret, credentialAad('pg_auth'));
    expectSealError(() => open(ring, sealed, credentialAad('other_auth')), 'cannot open sealed value: authentication failed');
    expectSealError(() => open(ring, sealed, keychainAad('pg_auth')), /authentication failed/);
    const entry = seal(ring, secret, keychainAad('api:7:100'));
    expectSealError(() => open(ring, entry, keychainAad('api:7:101')), /authentication failed/);
    expect(open(ring, entry, keychainAad('api:7:100'))).toEqual(secret);
  });

  it('fails with the key id named when the ring lacks the key', () => {
    const foreign = createKeyring(randomBytes(32), []);
    const sealed = seal(foreign, secret, aad);
    expectSealError(() => open(ring, sealed, aad), `cannot open sealed value: unknown key id ${foreign.currentKid}`);
  });

  it('fails on a wrong key that claims a known key id', () => {
    const sealed = seal(ring, secret, aad);
    const impostor = { currentKid: ring.currentKid, kids: ring.kids, keyFor: () => createSecretKey(randomBytes(32)) };
    expectSealError(() => open(impostor, sealed, aad), /authentication failed/);
  });
});

describe('key rotation', () => {
  it('opens values sealed under an old key and seals new ones with the current key', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createKeyring(oldKey, []);
    const sealedOld = seal(before, secret, aad);

    const after = createKeyring(newKey, [oldKey]);
    expect(open(after, sealedOld, aad)).toEqual(secret);
    expect(sealedKeyId(sealedOld)).toBe(before.currentKid);
    expect(sealedKeyId(sealedOld)).not.toBe(after.currentKid);

    const resealed = seal(after, open(after, sealedOld, aad), aad);
    expect(sealedKeyId(resealed)).toBe(after.currentKid);
    expect(open(after, resealed, aad)).toEqual(secret);
    // The old ring alone cannot read what the new key sealed.
    expectSealError(() => open(before, resealed, aad), `cannot open sealed value: unknown key id ${after.currentKid}`);
  });

  it('sealedKeyId refuses text that is not sealed', () => {
    expectSealError(() => sealedKeyId('plain text'), /malformed text/);
    expectSealError(() => sealedKeyId('v1.XYZ.a.b.c'), /malformed key id/);
  });
});
