/**
 * The pool's clock ticks every TICK_MS; a gap over FROZEN_MS means the process did not run
 * (SIGSTOP, a suspended host): answers that waited in its sockets meanwhile may hand it commands
 * the reaper has since let go and another worker ran.
 *
 * A gap is read on two clocks, the longer counting: performance.now() (and the ticker's own
 * timer) run on CLOCK_MONOTONIC, which on Linux stands still while the host is suspended
 * (https://github.com/nodejs/node/issues/47724), so after a suspend only the wall clock shows it.
 * A wall clock set forward (an NTP step) reads as a stand-still too: it costs one heartbeat before
 * the held commands start, nothing more. One set back reads as none.
 */
const TICK_MS = 500;
export const FROZEN_MS = 2_000;

/** How long the process stood still, read (and reset) by whoever acts on it. */
export class StandStillClock {
  #tickAt = performance.now();
  #tickWallAt = Date.now();
  #stoodStillMs = 0; // the last gap a tick saw, until taken or FROZEN_MS old
  #wokeAt = -Infinity;
  #ticker: NodeJS.Timeout | undefined;

  start(): void {
    [this.#tickAt, this.#tickWallAt] = [performance.now(), Date.now()];
    // After a pause the tick may run before, or after, the answers that waited in the sockets.
    this.#ticker = setInterval(() => {
      const now = performance.now();
      const gap = this.#sinceTick(now);
      if (gap >= FROZEN_MS) [this.#stoodStillMs, this.#wokeAt] = [gap, now];
      [this.#tickAt, this.#tickWallAt] = [now, Date.now()];
    }, TICK_MS);
    this.#ticker.unref();
  }

  stop(): void {
    clearInterval(this.#ticker);
  }

  /** Milliseconds the process stood still up to now or just before (FROZEN_MS or more; taken once); else 0. */
  takeStandStill(): number {
    const now = performance.now();
    const gap = this.#sinceTick(now);
    const ms = gap >= FROZEN_MS ? gap : now - this.#wokeAt < FROZEN_MS ? this.#stoodStillMs : 0;
    if (ms) [this.#tickAt, this.#tickWallAt, this.#wokeAt] = [now, Date.now(), -Infinity];
    return ms;
  }

  /** Since the last tick, by the clock that moved further (see above). */
  #sinceTick(now: number): number {
    return Math.max(now - this.#tickAt, Date.now() - this.#tickWallAt);
  }
}
