import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { presentCredential } from '../../../src/api/credentials.ts';
import { CREDENTIAL_TYPES } from '../../../src/credential/credential-types.ts';
import { readerPassword } from '../../../src/api/postgres.ts';
import { createKeyring } from '../../../src/crypto/keyring.ts';

describe('presentCredential', () => {
  it('returns metadata with the id as a string and UTC timestamps, never the sealed data', () => {
    const out = presentCredential({
      id: 42,
      name: 'db_auth',
      type: 'postgres',
      data_encrypted: 'v1.abcdef01.x.y.z',
      schema: null,
      meta: { owner: 'a' },
      tags: ['t'],
      description: null,
      created_at: new Date('2030-01-02T03:04:05.006Z'),
      updated_at: new Date('2030-01-02T03:04:06.000Z'),
    });
    expect(out).toEqual({
      id: '42',
      name: 'db_auth',
      type: 'postgres',
      description: null,
      tags: ['t'],
      meta: { owner: 'a' },
      schema: null,
      created_at: '2030-01-02T03:04:05.006Z',
      updated_at: '2030-01-02T03:04:06.000Z',
    });
    expect(JSON.stringify(out)).not.toContain('v1.');
  });

  it('knows the spec types, the warehouse one as snowflake', () => {
    expect([...CREDENTIAL_TYPES].sort()).toEqual(
      ['api_key', 'basic', 'bearer', 'clickhouse', 'custom', 'nats', 'oauth2', 'postgres', 'service_account', 'snowflake'],
    );
  });
});

describe('readerPassword', () => {
  it('is the same for rings sharing the current key, differs for another key, and is URL-safe', () => {
    const key = randomBytes(32);
    const a = readerPassword(createKeyring(key, []));
    expect(readerPassword(createKeyring(key, [randomBytes(32)]))).toBe(a);
    expect(readerPassword(createKeyring(randomBytes(32), [key]))).not.toBe(a);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toContain(key.toString('base64url'));
  });
});
