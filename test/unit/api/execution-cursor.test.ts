import { describe, expect, it } from 'vitest';
import { decodeExecutionCursor, encodeExecutionCursor } from '../../../src/api/execution-cursor.ts';
import { isCalendarDate } from '../../../src/calendar-time.ts';

describe('execution list cursor', () => {
  it('round-trips the last row position, to the microsecond', () => {
    const c = encodeExecutionCursor('2026-01-02T03:04:05.123456Z', 42);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeExecutionCursor(c)).toEqual({ startedAt: '2026-01-02T03:04:05.123456Z', id: 42 });
  });

  it('still takes a bare execution id (the older form)', () => {
    expect(decodeExecutionCursor('17')).toEqual({ afterId: 17 });
    expect(decodeExecutionCursor('0')).toBeUndefined();
    expect(decodeExecutionCursor('99999999999999999')).toBeUndefined();
  });

  it('refuses what it did not make', () => {
    const enc = (s: string) => Buffer.from(s).toString('base64url');
    for (const bad of ['abc', '-1', '1.5', '', enc('2026-02-30T00:00:00.000000Z 1'), enc('2026-01-01T00:00:00Z 1'), enc('2026-01-01T00:00:00.000000Z 0'), enc('2026-01-01T00:00:00.000000Z 1 2'), 'a+b/c=']) {
      expect(decodeExecutionCursor(bad), bad).toBeUndefined();
    }
  });

  it('knows real days', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2023-02-29')).toBe(false);
    expect(isCalendarDate('2024-13-01T00:00:00Z')).toBe(false);
    // The first century too (Date.UTC would read 0050 as 1950).
    expect(isCalendarDate('0050-06-01')).toBe(true);
    expect(isCalendarDate('0004-02-29')).toBe(true);
    expect(isCalendarDate('0100-02-29')).toBe(false);
  });
});
