import { describe, expect, it } from 'vitest';
import { readDecision, renewConfigAad, ttlMessage } from '../../../src/api/keychain.ts';
import { keychainAad } from '../../../src/crypto/seal.ts';
import { resolveExpiry } from '../../../src/keychain/ttl.ts';

const row = (expiresAtMs: number, autoRenew = false) => ({
  keychain_name: 'api',
  scope_type: 'global' as const,
  expires_at: new Date(expiresAtMs),
  auto_renew: autoRenew,
  access_count: 4,
});

describe('readDecision (the keychain-entry machine READ outcome)', () => {
  it('no row: not_found, no access recorded', () => {
    expect(readDecision(undefined, 'api', 'global', 1000)).toEqual({ outcome: 'not_found', recordAccess: false });
  });

  it('before expiry: success and the access is recorded', () => {
    expect(readDecision(row(2000), 'api', 'global', 1999)).toEqual({ outcome: 'success', recordAccess: true });
  });

  it('at or after expiry: expired, with or without auto_renew, nothing recorded', () => {
    expect(readDecision(row(2000), 'api', 'global', 2000)).toEqual({ outcome: 'expired', recordAccess: false });
    expect(readDecision(row(2000, true), 'api', 'local', 5000)).toEqual({ outcome: 'expired', recordAccess: false });
  });
});

describe('ttlMessage', () => {
  const now = new Date('2030-01-01T00:00:00.000Z');
  it('names the scope default when neither ttl_seconds nor expires_at is given', () => {
    expect(ttlMessage(resolveExpiry({ scope: 'local', now }), 'local')).toBe('Token cached with TTL 3600s (default for local scope)');
    expect(ttlMessage(resolveExpiry({ scope: 'shared', now }), 'shared')).toBe('Token cached with TTL 86400s (default for shared scope)');
    expect(ttlMessage(resolveExpiry({ scope: 'global', now }), 'global')).toBe('Token cached with TTL 86400s (default for global scope)');
  });
  it('states a given ttl_seconds, and expires_at (which wins) with its instant', () => {
    expect(ttlMessage(resolveExpiry({ scope: 'global', ttl_seconds: 90, now }), 'global')).toBe('Token cached with TTL 90s');
    const expiry = resolveExpiry({ scope: 'global', ttl_seconds: 90, expires_at: '2030-01-01T00:10:00.400Z', now });
    expect(ttlMessage(expiry, 'global')).toBe('Token cached with TTL 600s (until 2030-01-01T00:10:00.400Z)');
  });
});

describe('renewConfigAad', () => {
  it('differs from the token data AAD of every cache key', () => {
    expect(renewConfigAad('api:1:global')).toBe('keychain:api:1:global|renew_config');
    expect(renewConfigAad('api:1:global')).not.toBe(keychainAad('api:1:global'));
  });
});
