import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createKeyring, generateKeyBase64, keyId, parseKeyringFromEnv } from '../../../src/crypto/keyring.ts';

describe('createKeyring', () => {
  it('derives key ids as the first 8 hex chars of sha256(key)', () => {
    const key = Buffer.alloc(32, 7);
    const ring = createKeyring(key, []);
    expect(ring.currentKid).toMatch(/^[0-9a-f]{8}$/);
    expect(ring.currentKid).toBe(keyId(key));
    expect(ring.kids).toEqual([ring.currentKid]);
    expect(ring.keyFor(ring.currentKid)?.export().equals(key)).toBe(true);
  });

  it('holds old keys after the current one and folds duplicates', () => {
    const current = randomBytes(32);
    const old = randomBytes(32);
    const ring = createKeyring(current, [old, current, old]);
    expect(ring.kids).toEqual([keyId(current), keyId(old)]);
    expect(ring.keyFor(keyId(old))?.export().equals(old)).toBe(true);
    expect(ring.keyFor('00000000')).toBeUndefined();
  });

  it('copies keys so later changes to the caller buffer do not leak in', () => {
    const current = randomBytes(32);
    const copy = Buffer.from(current);
    const ring = createKeyring(current, []);
    current.fill(0);
    expect(ring.keyFor(ring.currentKid)?.export().equals(copy)).toBe(true);
  });

  it('refuses keys that are not 32 bytes, naming which one', () => {
    expect(() => createKeyring(Buffer.alloc(16), [])).toThrow('current encryption key must be 32 bytes, got 16 bytes');
    expect(() => createKeyring(randomBytes(32), [randomBytes(32), Buffer.alloc(33)])).toThrow(
      'old encryption key #2 must be 32 bytes, got 33 bytes',
    );
  });

  it('never shows key material when logged or serialised', () => {
    const key = Buffer.alloc(32, 0xab);
    const ring = createKeyring(key, []);
    const b64 = key.toString('base64');
    expect(JSON.stringify(ring)).not.toContain(b64);
    expect(Object.keys(JSON.parse(JSON.stringify(ring)))).toEqual(['currentKid', 'kids']);
    expect(inspect(ring, { depth: 5 })).not.toMatch(/Buffer|ab ab/);
  });
});

describe('parseKeyringFromEnv', () => {
  it('parses base64 current and old keys', () => {
    const current = randomBytes(32);
    const old1 = randomBytes(32);
    const old2 = randomBytes(32);
    const ring = parseKeyringFromEnv(
      current.toString('base64'),
      ` ${old1.toString('base64')} ,, ${old2.toString('base64url')},`,
    );
    expect(ring.currentKid).toBe(keyId(current));
    expect(ring.kids).toEqual([keyId(current), keyId(old1), keyId(old2)]);
  });

  it('accepts no old keys', () => {
    expect(parseKeyringFromEnv(generateKeyBase64(), undefined).kids).toHaveLength(1);
    expect(parseKeyringFromEnv(generateKeyBase64(), '').kids).toHaveLength(1);
  });

  it('names SVC_ENCRYPTION_KEY when the current key is wrong, without echoing it', () => {
    const short = randomBytes(31).toString('base64');
    expect(() => parseKeyringFromEnv(short, undefined)).toThrow(
      'SVC_ENCRYPTION_KEY must decode to 32 bytes, got 31 bytes',
    );
    expect(() => parseKeyringFromEnv('', undefined)).toThrow(/SVC_ENCRYPTION_KEY is empty/);
    expect(() => parseKeyringFromEnv('not base64 at all!', undefined)).toThrow(/SVC_ENCRYPTION_KEY is not valid base64/);
    try {
      parseKeyringFromEnv(short, undefined);
    } catch (err) {
      expect(String(err)).not.toContain(short);
    }
  });

  it('names SVC_ENCRYPTION_KEYS_OLD and the entry when an old key is wrong', () => {
    const good = generateKeyBase64();
    expect(() => parseKeyringFromEnv(good, `${generateKeyBase64()},${randomBytes(8).toString('base64')}`)).toThrow(
      'SVC_ENCRYPTION_KEYS_OLD entry #2 must decode to 32 bytes, got 8 bytes',
    );
    expect(() => parseKeyringFromEnv(good, 'a$b')).toThrow(/SVC_ENCRYPTION_KEYS_OLD entry #1 is not valid base64/);
  });
});

describe('generateKeyBase64', () => {
  it('makes distinct 32-byte keys in standard base64', () => {
    const a = generateKeyBase64();
    const b = generateKeyBase64();
    expect(a).not.toBe(b);
    expect(Buffer.from(a, 'base64')).toHaveLength(32);
    expect(a).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });
});
