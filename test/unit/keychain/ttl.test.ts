import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import {
  DEFAULT_GLOBAL_TTL_SECONDS,
  DEFAULT_LOCAL_TTL_SECONDS,
  DEFAULT_SHARED_TTL_SECONDS,
  RENEWAL_FALLBACK_TTL_SECONDS,
  defaultTtlSeconds,
  renewConfigDefaults,
  renewConfigSchema,
  resolveExpiry,
  tokenFromRenewResponse,
} from '../../../src/keychain/ttl.ts';

const now = new Date('2025-12-16T02:00:00.000Z');

describe('TTL defaults', () => {
  it('match the spec', () => {
    expect(DEFAULT_LOCAL_TTL_SECONDS).toBe(3600);
    expect(DEFAULT_SHARED_TTL_SECONDS).toBe(86400);
    expect(DEFAULT_GLOBAL_TTL_SECONDS).toBe(86400);
    expect(RENEWAL_FALLBACK_TTL_SECONDS).toBe(3600);
    expect(defaultTtlSeconds('local')).toBe(3600);
    expect(defaultTtlSeconds('shared')).toBe(86400);
    expect(defaultTtlSeconds('global')).toBe(86400);
  });
});

describe('resolveExpiry', () => {
  it('uses the scope default when neither ttl_seconds nor expires_at is given', () => {
    expect(resolveExpiry({ scope: 'local', now })).toEqual({
      expiresAt: new Date('2025-12-16T03:00:00.000Z'),
      ttlSeconds: 3600,
      source: 'default',
    });
    expect(resolveExpiry({ scope: 'global', ttl_seconds: null, expires_at: null, now })).toEqual({
      expiresAt: new Date('2025-12-17T02:00:00.000Z'),
      ttlSeconds: 86400,
      source: 'default',
    });
    expect(resolveExpiry({ scope: 'shared', now }).ttlSeconds).toBe(86400);
  });

  it('applies ttl_seconds', () => {
    expect(resolveExpiry({ scope: 'global', ttl_seconds: 1800, now })).toEqual({
      expiresAt: new Date('2025-12-16T02:30:00.000Z'),
      ttlSeconds: 1800,
      source: 'ttl_seconds',
    });
  });

  it('lets expires_at win over ttl_seconds', () => {
    expect(resolveExpiry({ scope: 'local', ttl_seconds: 60, expires_at: '2025-12-16T02:10:00Z', now })).toEqual({
      expiresAt: new Date('2025-12-16T02:10:00.000Z'),
      ttlSeconds: 600,
      source: 'expires_at',
    });
    const at = new Date('2025-12-16T02:00:01.500Z');
    const resolved = resolveExpiry({ scope: 'local', expires_at: at, now });
    expect(resolved.ttlSeconds).toBe(1.5);
    expect(resolved.expiresAt).not.toBe(at);
  });

  it('reports a past expires_at as 0 seconds left', () => {
    expect(resolveExpiry({ scope: 'local', expires_at: '2025-12-16T01:00:00Z', now }).ttlSeconds).toBe(0);
  });

  it('refuses an unreadable expires_at and a non-positive ttl_seconds', () => {
    expect(() => resolveExpiry({ scope: 'local', expires_at: 'tomorrow-ish', now })).toThrow(RangeError);
    expect(() => resolveExpiry({ scope: 'local', ttl_seconds: 0, now })).toThrow('ttl_seconds must be a positive number');
    expect(() => resolveExpiry({ scope: 'local', ttl_seconds: -5, now })).toThrow(RangeError);
    expect(() => resolveExpiry({ scope: 'local', ttl_seconds: Number.NaN, now })).toThrow(RangeError);
  });
});

describe('renew_config', () => {
  it('fills the defaults', () => {
    expect(renewConfigDefaults({ endpoint: 'https://auth.example/token' })).toEqual({
      endpoint: 'https://auth.example/token',
      method: 'POST',
      headers: {},
      token_field: 'access_token',
      ttl_field: 'expires_in',
    });
  });

  it('keeps what is given', () => {
    const cfg = {
      endpoint: 'https://auth.example/token',
      method: 'put',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      data: { grant_type: 'client_credentials' },
      token_field: 'token',
      ttl_field: 'lifetime',
    };
    expect(renewConfigDefaults(cfg)).toEqual({ ...cfg, method: 'PUT' });
  });

  it('has a valibot schema that refuses a missing or bad endpoint', () => {
    expect(v.is(renewConfigSchema, { endpoint: 'https://auth.example/token' })).toBe(true);
    expect(v.is(renewConfigSchema, {})).toBe(false);
    expect(v.is(renewConfigSchema, { endpoint: 'not a url' })).toBe(false);
    expect(v.is(renewConfigSchema, { endpoint: 'https://a.example', headers: { a: 1 } })).toBe(false);
  });
});

describe('tokenFromRenewResponse', () => {
  const cfg = { endpoint: 'https://auth.example/token' };
  const token = 'eyJ-secret-token-value';

  it('takes the whole 200 body as token_data with the ttl from expires_in', () => {
    const body = { access_token: token, token_type: 'Bearer', expires_in: 1799 };
    expect(tokenFromRenewResponse(200, body, cfg)).toEqual({ ok: true, tokenData: body, ttlSeconds: 1799 });
  });

  it('falls back to 3600 s without a usable expires_in', () => {
    for (const body of [{ access_token: token }, { access_token: token, expires_in: 'soon' }, { access_token: token, expires_in: 0 }]) {
      const result = tokenFromRenewResponse(200, body, cfg);
      expect(result.ok && result.ttlSeconds).toBe(3600);
    }
  });

  it('reads a numeric-text ttl and honours custom fields', () => {
    const result = tokenFromRenewResponse(200, { token, lifetime: '120' }, { ...cfg, token_field: 'token', ttl_field: 'lifetime' });
    expect(result).toEqual({ ok: true, tokenData: { token, lifetime: '120' }, ttlSeconds: 120 });
  });

  it('fails on anything but HTTP 200, without quoting the body', () => {
    for (const status of [201, 204, 301, 400, 401, 500]) {
      const result = tokenFromRenewResponse(status, { access_token: token }, cfg);
      expect(result).toEqual({ ok: false, reason: `token endpoint answered HTTP ${status}, expected 200` });
    }
  });

  it('fails when the body is not an object or lacks the token', () => {
    for (const body of [null, 'text', [token], { token_type: 'Bearer' }, { access_token: '' }, { access_token: 5 }]) {
      const result = tokenFromRenewResponse(200, body, cfg);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).not.toContain(token);
    }
    expect(tokenFromRenewResponse(200, { token: token }, cfg)).toEqual({
      ok: false,
      reason: "token endpoint answer has no non-empty string field 'access_token'",
    });
  });
});
