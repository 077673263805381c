// A wildcard-hour schedule (`30 * * * *`) fired twice in the spring-forward hour: at the gap's end
// (03:00 CEST, the skipped 02:30 moved there) and at its own 03:30, 30 minutes apart, though
// docs/triggers.md says patterns whose minute or hour field starts with `*` fire by real time.
import { describe, expect, it } from 'vitest';
import { firesBetween, latestFires, nextFire } from '../../../src/triggers/cron-schedule.ts';

const iso = (ds: (Date | null)[]) => ds.map((d) => d?.toISOString() ?? null);
// Europe/Berlin, 2026-03-29: 02:00 CET (01:00Z) → 03:00 CEST.
const night = (cron: string, tz = 'Europe/Berlin', from = '2026-03-28T23:00:00Z', to = '2026-03-29T03:00:00Z') =>
  iso(firesBetween(cron, tz, new Date(from), new Date(to), 20));

describe('a spring-forward gap and wildcard patterns', () => {
  it('`30 * * * *` fires every real hour at :30, with nothing at the gap end', () => {
    expect(night('30 * * * *')).toEqual(['2026-03-28T23:30:00.000Z', '2026-03-29T00:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-29T02:30:00.000Z']);
    expect(night('0 30 * * * *')).toEqual(['2026-03-28T23:30:00.000Z', '2026-03-29T00:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-29T02:30:00.000Z']);
    expect(iso([nextFire('30 * * * *', 'Europe/Berlin', new Date('2026-03-29T00:30:00Z'))])).toEqual(['2026-03-29T01:30:00.000Z']);
    // Catch-up after a downtime over the change sees the same times.
    expect(iso(latestFires('15,45 * * * *', 'Europe/Berlin', new Date('2026-03-29T01:50:00Z'), 3))).toEqual(['2026-03-29T00:45:00.000Z', '2026-03-29T01:15:00.000Z', '2026-03-29T01:45:00.000Z']);
    // New York: 02:00 EST (07:00Z) → 03:00 EDT.
    expect(night('30 * * * *', 'America/New_York', '2026-03-08T06:00:00Z', '2026-03-08T08:00:00Z')).toEqual(['2026-03-08T06:30:00.000Z', '2026-03-08T07:30:00.000Z']);
  });

  it('`45 */2 * * *` and `*/20 2 * * *` (wildcards) add no fire at 03:00 CEST', () => {
    expect(night('45 */2 * * *')).toEqual(['2026-03-28T23:45:00.000Z', '2026-03-29T02:45:00.000Z']);
    expect(night('*/20 2 * * *')).toEqual([]);
  });

  it('fixed-time patterns still fire the night once at 03:00 CEST', () => {
    expect(night('30 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(night('0,30 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(night('30 1-3 * * *')).toEqual(['2026-03-29T00:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z']);
  });
});
