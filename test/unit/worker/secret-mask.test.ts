import { describe, expect, it } from 'vitest';
import { credentialSecrets, MIN_SECRET_LENGTH, SECRET_MASK, SecretMask } from '../../../src/credential/redact-secrets.ts';

describe('SecretMask', () => {
  it('masks a secret and its base64, URL, form and JSON-escaped forms', () => {
    const secret = 'p@ss word/"x"+=';
    const mask = new SecretMask([secret]);
    const forms = [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64').replace(/=+$/, ''),
      Buffer.from(secret).toString('base64url'),
      encodeURIComponent(secret),
      new URLSearchParams({ a: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
    ];
    for (const form of forms) expect(mask.mask(`before ${form} after`)).toBe(`before ${SECRET_MASK} after`);
  });

  it('masks the longer of two overlapping secrets whole, and skips values shorter than the minimum', () => {
    const mask = new SecretMask(['secret-1', 'url-with-secret-1-inside', 'abc']);
    expect(mask.mask('url-with-secret-1-inside and secret-1 and abc')).toBe(`${SECRET_MASK} and ${SECRET_MASK} and abc`);
    expect(MIN_SECRET_LENGTH).toBe(4);
  });

  it('takes every keychain string but the token metadata fields', () => {
    const mask = new SecretMask();
    expect(mask.empty).toBe(true);
    mask.addKeychain({ api: { access_token: 'tok-123456', token_type: 'Bearer', expires_in: 3600, scope: 'read write' }, vault: { db: 'vault-value', list: ['item-secret'] } });
    expect(mask.mask('tok-123456 Bearer read write vault-value item-secret')).toBe(`${SECRET_MASK} Bearer read write ${SECRET_MASK} ${SECRET_MASK}`);
  });

  it("takes a credential's secret fields, a URL's password and a basic credential's user:password", () => {
    const basic = credentialSecrets({ name: 'b', type: 'basic', data: { username: 'alice', password: 'wonder-land' } });
    expect(basic).toEqual(['wonder-land', 'alice:wonder-land']);
    const custom = credentialSecrets({ name: 'c', type: 'custom', data: { headers: { 'X-Signature': 'sig-value' }, host: 'db.local', dsn: 'postgres://u:pw-in-url@h/db' } });
    expect(custom).toEqual(['sig-value', 'postgres://u:pw-in-url@h/db', 'pw-in-url', 'pw-in-url']);
    const mask = new SecretMask(basic);
    expect(mask.mask(`Basic ${Buffer.from('alice:wonder-land').toString('base64')}`)).toBe(`Basic ${SECRET_MASK}`);
  });
});
