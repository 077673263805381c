// The daylight-saving gap check of a fixed-time schedule walked every day between two fires: one
// next fire of `0 0 29 2 *` read the zone's offset ~3,200 times, and a backfill over 2,025 years
// held the server's event loop ~3 s (1.6 s for a yearly cron's 422). It walks the cron's own times.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { firesBetween, nextFire } from '../../../src/triggers/cron-schedule.ts';

/** Offset reads (dst-gap.ts reads a zone's offset with formatToParts) while `run` runs. */
function offsetReads(run: () => void): number {
  const spy = vi.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts');
  try {
    run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the gap check of a rare fixed-time cron', () => {
  it('reads the offset a few times per fire, not once per day between fires', () => {
    let next: Date | null = null;
    const reads = offsetReads(() => {
      next = nextFire('0 0 29 2 *', 'Europe/Berlin', new Date('2024-03-01T00:00:00Z'));
    });
    expect(next).toEqual(new Date('2028-02-28T23:00:00.000Z'));
    expect(reads).toBeLessThan(100); // 3,193 walking the days
  });

  it('keeps the answers: a leap day in Berlin from year 1 on, and the spring-forward nights', () => {
    const leap = firesBetween('0 0 29 2 *', 'Europe/Berlin', new Date('0001-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'), 1001);
    expect(leap).toHaveLength(491);
    expect(leap.at(-1)?.toISOString()).toBe('2024-02-28T23:00:00.000Z');
    const reads = offsetReads(() => firesBetween('0 0 1 1 *', 'Europe/Berlin', new Date('1026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'), 1001));
    expect(reads).toBeLessThan(100_000); // ~32,000 (croner's own reads too); ~743,000 walking the days
    expect(firesBetween('0,30 2 * * *', 'America/New_York', new Date('2026-03-07T12:00:00Z'), new Date('2026-03-09T00:00:00Z'), 10).map((d) => d.toISOString())).toEqual(['2026-03-08T07:00:00.000Z']);
    expect(firesBetween('15 2 * * *', 'Australia/Lord_Howe', new Date('2026-10-03T00:00:00Z'), new Date('2026-10-06T00:00:00Z'), 10).map((d) => d.toISOString())).toEqual([
      '2026-10-03T15:30:00.000Z',
      '2026-10-04T15:15:00.000Z',
      '2026-10-05T15:15:00.000Z',
    ]);
    // ~1.5 s of work alone (1,000 years of fires, twice): past the 5 s default on a loaded machine.
  }, 30_000);
});
