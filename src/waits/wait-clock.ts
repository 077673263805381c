/**
 * Tells this server's timekeeper of a wake-up time sooner than it sleeps to: a routing that
 * wrote a wait, a resume that made due waits fireable. The timekeeper of another server sees it
 * at its next look (at most TIMEKEEPER_MAX_SLEEP_MS later).
 */
export class WaitClock {
  #listener: ((atMs: number) => void) | undefined;

  /** A wait may be due at `atMs` (epoch ms; now or earlier: at once). */
  nudge(atMs: number): void {
    this.#listener?.(atMs);
  }

  /** The timekeeper's ear (one per server). */
  listen(listener: ((atMs: number) => void) | undefined): void {
    this.#listener = listener;
  }
}
