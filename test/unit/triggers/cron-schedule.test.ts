import { describe, expect, it } from 'vitest';
import { cronProblem, firesBetween, latestFires, nextFire } from '../../../src/triggers/cron-schedule.ts';
import { duePick, MISFIRE_GRACE_MS } from '../../../src/triggers/scheduler.ts';

const iso = (dates: (Date | null)[]) => dates.map((d) => d?.toISOString() ?? null);

describe('cron schedules', () => {
  it('reads five fields, six with seconds first, and the @aliases', () => {
    expect(nextFire('0 2 * * *', 'UTC', new Date('2026-01-01T03:00:00Z'))?.toISOString()).toBe('2026-01-02T02:00:00.000Z');
    expect(nextFire('*/10 * * * * *', 'UTC', new Date('2026-01-01T00:00:01Z'))?.toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(nextFire('@hourly', 'UTC', new Date('2026-01-01T00:10:00Z'))?.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(nextFire('@daily', 'Europe/Berlin', new Date('2026-01-01T12:00:00Z'))?.toISOString()).toBe('2026-01-01T23:00:00.000Z');
  });

  it('names what is wrong: a field out of range, a count of fields, an alias, a timezone', () => {
    expect(cronProblem('61 * * * *', 'UTC')).toMatchObject({ field: 'cron', message: expect.stringContaining('minute') });
    expect(cronProblem('* * * *', 'UTC')).toMatchObject({ field: 'cron', message: expect.stringContaining('4 fields') });
    expect(cronProblem('* * * * * * *', 'UTC')?.field).toBe('cron');
    expect(cronProblem('@fortnightly', 'UTC')?.message).toContain('unknown alias');
    expect(cronProblem('* * * * *', 'Mars/Olympus')).toMatchObject({ field: 'timezone' });
    expect(cronProblem('0 2 * * *', 'America/New_York')).toBeUndefined();
  });

  it('a timezone is an IANA name: UTC offsets, which Intl also takes, are refused naming the field', () => {
    for (const offset of ['+05:00', '-0500', '+05', '\u221205:00', '+00:00']) {
      expect(cronProblem('0 2 * * *', offset), offset).toEqual({ field: 'timezone', message: expect.stringContaining('is a UTC offset, not an IANA timezone') });
    }
    for (const other of ['', ' Europe/Berlin', 'Europe//Berlin', 'Z']) expect(cronProblem('0 2 * * *', other)?.field, JSON.stringify(other)).toBe('timezone');
    for (const name of ['UTC', 'Europe/Berlin', 'Etc/GMT-5', 'Etc/GMT+10', 'America/Argentina/Buenos_Aires', 'US/Eastern', 'EST5EDT', 'Asia/Kolkata']) {
      expect(cronProblem('0 2 * * *', name), name).toBeUndefined();
    }
  });

  it('daylight saving (Europe/Berlin): 02:30 on the spring-forward night fires once at 03:00; on the fall-back night once', () => {
    // 2026-03-29: 02:00 CET → 03:00 CEST. 2026-10-25: 03:00 CEST → 02:00 CET.
    expect(iso(firesBetween('30 2 * * *', 'Europe/Berlin', new Date('2026-03-28T00:00:00Z'), new Date('2026-03-31T00:00:00Z'), 10))).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    expect(iso(firesBetween('30 2 * * *', 'Europe/Berlin', new Date('2026-10-24T00:00:00Z'), new Date('2026-10-27T00:00:00Z'), 10))).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('a spring-forward night where several skipped local times match fires once at 03:00, not never', () => {
    // croner alone dropped the night of `0,30 2` and `15,45 2`, and the 02:30 of `30 1-3` (no fire at 03:00).
    const spring = (cron: string, tz = 'Europe/Berlin') => iso(firesBetween(cron, tz, new Date('2026-03-28T12:00:00Z'), new Date('2026-03-30T01:00:00Z'), 10));
    expect(spring('0,30 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:00:00.000Z', '2026-03-30T00:30:00.000Z']);
    expect(spring('15,45 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:15:00.000Z', '2026-03-30T00:45:00.000Z']);
    expect(spring('30 1-3 * * *')).toEqual(['2026-03-29T00:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-29T23:30:00.000Z', '2026-03-30T00:30:00.000Z']);
    // A matching time at 03:00 itself is the same fire, once.
    expect(spring('0 2,3 * * *')).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:00:00.000Z']);
    expect(iso([nextFire('0,30 2 * * *', 'Europe/Berlin', new Date('2026-03-29T00:00:00Z'))])).toEqual(['2026-03-29T01:00:00.000Z']);
    // Catch-up after downtime over that night sees it too.
    expect(iso(latestFires('0,30 2 * * *', 'Europe/Berlin', new Date('2026-03-29T12:00:00Z'), 2))).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z']);
    // New York: 02:00 EST → 03:00 EDT on 2026-03-08.
    expect(iso(firesBetween('0,30 2 * * *', 'America/New_York', new Date('2026-03-07T12:00:00Z'), new Date('2026-03-09T00:00:00Z'), 10))).toEqual(['2026-03-08T07:00:00.000Z']);
  });

  it('a fall-back night: a fixed-time pattern fires each repeated local time once, a wildcard one by real time', () => {
    // 2026-10-25: 03:00 CEST → 02:00 CET. croner alone fired 02:00 and 02:30 of `0,30 2` twice each.
    const fall = (cron: string) => iso(firesBetween(cron, 'Europe/Berlin', new Date('2026-10-24T12:00:00Z'), new Date('2026-10-25T03:00:00Z'), 20));
    expect(fall('0,30 2 * * *')).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T00:30:00.000Z']);
    expect(fall('30 1-3 * * *')).toEqual(['2026-10-24T23:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00.000Z']);
    expect(fall('0 * * * *')).toHaveLength(15);
    expect(iso(latestFires('0,30 2 * * *', 'Europe/Berlin', new Date('2026-10-25T02:00:00Z'), 3))).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T00:30:00.000Z',
    ]);
  });

  it('ranges are [from, to) and bounded; latestFires walks back without enumerating the whole downtime', () => {
    expect(iso(firesBetween('@hourly', 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T03:00:00Z'), 10))).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T01:00:00.000Z',
      '2026-01-01T02:00:00.000Z',
    ]);
    expect(firesBetween('* * * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2027-01-01T00:00:00Z'), 5)).toHaveLength(5);
    expect(iso(latestFires('* * * * * *', 'UTC', new Date('2030-01-01T00:00:05Z'), 2))).toEqual(['2030-01-01T00:00:04.000Z', '2030-01-01T00:00:05.000Z']);
  });
});

describe('which due times a tick fires', () => {
  const spec = { cron: '*/5 * * * *', timezone: 'UTC', max_catch_up: 3 };
  const from = new Date('2030-01-01T00:00:00Z');
  const late = new Date('2030-01-01T01:02:00Z'); // an hour down: nothing within the grace

  it('on time: every time within the grace fires, whatever the policy', () => {
    const tickLate = new Date(from.getTime() + MISFIRE_GRACE_MS - 1000);
    for (const catch_up of ['none', 'latest', 'all'] as const) expect(iso(duePick({ ...spec, catch_up }, from, tickLate))).toEqual(['2030-01-01T00:00:00.000Z']);
  });

  it('after downtime: none nothing, latest the newest missed, all the newest max_catch_up', () => {
    expect(duePick({ ...spec, catch_up: 'none' }, from, late)).toEqual([]);
    expect(iso(duePick({ ...spec, catch_up: 'latest' }, from, late))).toEqual(['2030-01-01T01:00:00.000Z']);
    expect(iso(duePick({ ...spec, catch_up: 'all' }, from, late))).toEqual(['2030-01-01T00:50:00.000Z', '2030-01-01T00:55:00.000Z', '2030-01-01T01:00:00.000Z']);
  });
});
