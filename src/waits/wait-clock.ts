/**
 * Now on the database's clock as this server last read it (its own without a clock: tools, tests):
 * what it records (a report's moments, a cancel, a fire) sits among times PostgreSQL wrote, and
 * what it decides (a wait, a schedule) is due by PostgreSQL's clock.
 */
export function databaseNow(deps: { readonly waitClock?: WaitClock }): number {
  return deps.waitClock?.databaseNow() ?? Date.now();
}

/**
 * Tells this server's timekeeper of a wake-up time sooner than it sleeps to: a routing that
 * wrote a wait, a resume that made due waits fireable. The timekeeper of another server sees it
 * at its next look (at most TIMEKEEPER_MAX_SLEEP_MS later).
 */
export class WaitClock {
  #listener: ((atMs: number) => void) | undefined;
  /** How far the database's clock is ahead of this server's (ms; negative: behind), as last read. */
  #databaseAheadMs = 0;

  /** A wait may be due at `atMs` (epoch ms; now or earlier: at once). */
  nudge(atMs: number): void {
    this.#listener?.(atMs);
  }

  /** The timekeeper's ear (one per server). */
  listen(listener: ((atMs: number) => void) | undefined): void {
    this.#listener = listener;
  }

  /**
   * The database said its time was `databaseMs` in a statement sent at `sentMs` and answered at
   * `answeredMs` (this server's clock): its now() is taken as of the middle of the two.
   */
  heardDatabase(databaseMs: number, sentMs: number, answeredMs: number): void {
    this.#databaseAheadMs = databaseMs - (sentMs + answeredMs) / 2;
  }

  /**
   * Now by the database's clock, which decides what is due (src/db/wait.repo.ts): a wait's
   * wake-up counted from it lasts what the playbook says on a server whose own clock is off.
   */
  databaseNow(): number {
    return Date.now() + this.#databaseAheadMs;
  }

  /** A time on the database's clock (a wait's wake-up) as this server's clock, which its sleeps count by. */
  serverTimeOf(databaseMs: number): number {
    return databaseMs - this.#databaseAheadMs;
  }
}
