import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashApiToken, looksLikeApiToken, newApiToken } from '../../../src/auth/api-token.ts';
import { isRole, roleAtLeast } from '../../../src/auth/roles.ts';

describe('API tokens', () => {
  it('are 256 random bits after svc_, stored as their SHA-256 only, shown by a short prefix', () => {
    const a = newApiToken();
    const b = newApiToken();
    expect(a.token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toBe(createHash('sha256').update(a.token).digest('hex'));
    expect(hashApiToken(a.token)).toBe(a.hash);
    expect(a.prefix).toBe(a.token.slice(0, 12));
    expect(looksLikeApiToken(a.token)).toBe(true);
    for (const other of ['', 'svc_', `${a.token}x`, a.token.slice(1), `svc_${'!'.repeat(43)}`]) expect(looksLikeApiToken(other)).toBe(false);
  });

  it('roles include the ones below them', () => {
    expect(roleAtLeast('admin', 'operator')).toBe(true);
    expect(roleAtLeast('operator', 'viewer')).toBe(true);
    expect(roleAtLeast('operator', 'admin')).toBe(false);
    expect(roleAtLeast('viewer', 'operator')).toBe(false);
    expect(isRole('admin')).toBe(true);
    expect(isRole('root')).toBe(false);
    expect(isRole('toString')).toBe(false);
  });
});
