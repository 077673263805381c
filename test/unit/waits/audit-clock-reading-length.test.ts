// A server reads PostgreSQL's clock at each look at the waits and took its now() as of the middle
// of the statement's send and answer. A reading slowed by a busy pool or event loop (130 ms) then
// put the database's clock 65 ms ahead of itself, and a report's moments (stamped by it) came after
// the events PostgreSQL wrote next (svc logs: GAP -65ms). Its now() is now a lower bound, as of the
// answer, taken from the quickest recent reading; a server whose clock is the database's (the
// reading leaves no doubt of it) keeps its own.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { WaitClock } from '../../../src/waits/wait-clock.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

it('never puts the database ahead of what it said, and a slow reading does not replace a quick one', () => {
  const clock = new WaitClock();
  // The same clock on both sides: a 2 ms reading, the database's now() 1 ms after the send.
  clock.heardDatabase(999_999, 999_998, 1_000_000);
  expect(clock.databaseNow()).toBeLessThanOrEqual(1_000_000);
  expect(clock.databaseNow()).toBeGreaterThanOrEqual(999_998);
  // One second on, a reading that waited 130 ms for a connection (its now() at the send).
  vi.setSystemTime(1_001_000);
  clock.heardDatabase(1_000_870, 1_000_870, 1_001_000);
  expect(clock.databaseNow()).toBeLessThanOrEqual(1_001_000);
  expect(clock.databaseNow()).toBeGreaterThanOrEqual(1_000_998);
});

it('reads a clock the database shares as its own, however slow the reading', () => {
  const clock = new WaitClock();
  // One host: the database's now() fell within the 130 ms the reading took.
  clock.heardDatabase(999_950, 999_870, 1_000_000);
  expect(clock.databaseNow()).toBe(1_000_000);
});

it('follows a clock stepped by seconds at the next quick reading', () => {
  const clock = new WaitClock();
  clock.heardDatabase(1_000_000, 999_999, 1_000_000);
  vi.setSystemTime(1_001_000);
  // The server's clock was stepped 30 s back: the database is now 30 s ahead of it.
  clock.heardDatabase(1_031_000, 1_000_999, 1_001_000);
  expect(clock.databaseNow()).toBe(1_031_000);
});

it('takes a slow reading once the quick one has aged past its doubt', () => {
  const clock = new WaitClock();
  clock.heardDatabase(1_000_000, 999_999, 1_000_000);
  // Ten minutes on, only slow readings (200 ms): a 20 s step is followed, within a reading's length.
  vi.setSystemTime(1_600_000);
  clock.heardDatabase(1_619_800, 1_599_800, 1_600_000);
  expect(clock.databaseNow()).toBe(1_619_800);
});
