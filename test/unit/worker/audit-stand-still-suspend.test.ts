// A worker on a host that was suspended (a laptop's lid, a VM's snapshot) did not run for as long
// as a SIGSTOPped one, and the reaper may have let its commands go meanwhile; it must ask before
// starting any (docs/operations.md, The command reaper). Node's performance.now() and timers run
// on CLOCK_MONOTONIC, which on Linux stands still while the host sleeps
// (https://github.com/nodejs/node/issues/47724): after a suspend the pool's ticks showed no gap,
// and it started commands another worker had already run. Only the wall clock moved, as here.
import { afterEach, expect, it, vi } from 'vitest';
import { FROZEN_MS, StandStillClock } from '../../../src/worker/stand-still-clock.ts';

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  vi.useRealTimers();
});

it('sees a suspended host: the wall clock moved on while the monotonic clock did not', async () => {
  const clock = new StandStillClock();
  clock.start();
  try {
    await settle(600);
    expect(clock.takeStandStill()).toBe(0);
    // The host slept 30 s: Date jumps, performance.now() and the timers go on as if it had not.
    vi.setSystemTime(Date.now() + 30_000);
    await settle(700); // a tick or two
    expect(clock.takeStandStill()).toBeGreaterThanOrEqual(30_000 - FROZEN_MS);
    // Taken once.
    expect(clock.takeStandStill()).toBe(0);
  } finally {
    clock.stop();
  }
});

it('a wall clock set back is no stand-still, and one seen at the take itself counts', async () => {
  const clock = new StandStillClock();
  clock.start();
  try {
    vi.setSystemTime(Date.now() - 3_600_000);
    await settle(700);
    expect(clock.takeStandStill()).toBe(0);
    // Woken and asked at once, before any tick: the take looks at both clocks too.
    vi.setSystemTime(Date.now() + 10_000);
    expect(clock.takeStandStill()).toBeGreaterThanOrEqual(10_000 - FROZEN_MS);
  } finally {
    clock.stop();
  }
});
