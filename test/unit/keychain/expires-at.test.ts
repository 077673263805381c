// expires_at of a stored keychain entry: ISO 8601, UTC unless it names an offset, on a real day,
// whatever zone the server runs in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveExpiry } from '../../../src/keychain/ttl.ts';

const now = new Date('2026-01-01T00:00:00.000Z');
const expiry = (expires_at: string) => resolveExpiry({ scope: 'global', expires_at, now }).expiresAt.toISOString();

let zone: string | undefined;
beforeAll(() => {
  // A server outside UTC: JavaScript reads a date-time without an offset in this zone.
  zone = process.env.TZ;
  process.env.TZ = 'Asia/Tokyo';
});
afterAll(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe('expires_at', () => {
  it('without an offset is UTC (Python writes datetime.utcnow().isoformat() so), in the server zone or not', () => {
    expect(new Date(2030, 0, 1).toISOString()).toBe('2029-12-31T15:00:00.000Z'); // the zone is in effect
    expect(expiry('2030-01-01T00:00:00')).toBe('2030-01-01T00:00:00.000Z');
    expect(expiry('2030-01-01T00:00:00.123456')).toBe('2030-01-01T00:00:00.123Z');
    expect(expiry('2030-01-01 12:30')).toBe('2030-01-01T12:30:00.000Z');
    expect(expiry('2030-01-01')).toBe('2030-01-01T00:00:00.000Z');
  });

  it('with an offset is that instant', () => {
    expect(expiry('2030-01-01T09:00:00+09:00')).toBe('2030-01-01T00:00:00.000Z');
    expect(expiry('2030-01-01T09:00:00+0900')).toBe('2030-01-01T00:00:00.000Z');
    expect(expiry('2030-01-01T09:00:00+09')).toBe('2030-01-01T00:00:00.000Z');
    expect(expiry('2030-01-01T00:00:00z')).toBe('2030-01-01T00:00:00.000Z');
  });

  it('refuses a day that does not exist and text that is no ISO 8601 time', () => {
    for (const text of ['2027-02-30T00:00:00Z', '2027-13-01', 'tomorrow', 'March 7, 2030', '2030', '2030-01-01T25:00:00Z', '1893456000']) {
      expect(() => expiry(text), text).toThrow(RangeError);
    }
  });
});
