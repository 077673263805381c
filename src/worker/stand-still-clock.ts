/**
 * The pool's clock ticks every TICK_MS; a gap over FROZEN_MS means the process did not run
 * (SIGSTOP, a suspended host): answers that waited in its sockets meanwhile may hand it commands
 * the reaper has since let go and another worker ran.
 */
const TICK_MS = 500;
export const FROZEN_MS = 2_000;

/** How long the process stood still, read (and reset) by whoever acts on it. */
export class StandStillClock {
  #tickAt = performance.now();
  #stoodStillMs = 0; // the last gap a tick saw, until taken or FROZEN_MS old
  #wokeAt = -Infinity;
  #ticker: NodeJS.Timeout | undefined;

  start(): void {
    this.#tickAt = performance.now();
    // After a pause the tick may run before, or after, the answers that waited in the sockets.
    this.#ticker = setInterval(() => {
      const now = performance.now();
      if (now - this.#tickAt >= FROZEN_MS) [this.#stoodStillMs, this.#wokeAt] = [now - this.#tickAt, now];
      this.#tickAt = now;
    }, TICK_MS);
    this.#ticker.unref();
  }

  stop(): void {
    clearInterval(this.#ticker);
  }

  /** Milliseconds the process stood still up to now or just before (FROZEN_MS or more; taken once); else 0. */
  takeStandStill(): number {
    const now = performance.now();
    const ms = now - this.#tickAt >= FROZEN_MS ? now - this.#tickAt : now - this.#wokeAt < FROZEN_MS ? this.#stoodStillMs : 0;
    if (ms) [this.#tickAt, this.#wokeAt] = [now, -Infinity];
    return ms;
  }
}
