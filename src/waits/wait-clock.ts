/**
 * How fast a kept reading of the database's clock loses trust, in ms of doubt per ms of its age
 * (1 ms a second: far past any crystal's drift, so a clock stepped by NTP is followed within
 * seconds, while a reading slowed by a busy pool or event loop does not replace a quick one).
 */
const DOUBT_PER_MS_OF_AGE = 0.001;

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
  /** How far the database's clock is ahead of this server's (ms; negative: behind), as read. */
  #databaseAheadMs = 0;
  /** How long the reading that gave it took (ms), and when it was answered (this server's clock). */
  #readingMs = Infinity;
  #readAtMs = 0;

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
   * `answeredMs` (this server's clock): it is ahead by between `databaseMs - answeredMs` and
   * `databaseMs - sentMs`. When 0 is between them (one host, or clocks kept in step) this server's
   * own clock is the database's; otherwise its now() is taken as of the answer, a lower bound, so a
   * moment this server records is never after what the database writes next, nor a wait due early.
   * Off by at most the reading's length, a reading is kept until a quicker one comes (or it has
   * aged): taken as the middle of one 130 ms long, behind a busy pool, reports came 65 ms after the
   * events that followed them, and as its answer, a backfill `to` a client's now was "after now".
   */
  heardDatabase(databaseMs: number, sentMs: number, answeredMs: number): void {
    const readingMs = Math.max(0, answeredMs - sentMs);
    if (readingMs > this.#readingMs + (answeredMs - this.#readAtMs) * DOUBT_PER_MS_OF_AGE) return;
    const least = databaseMs - answeredMs;
    this.#databaseAheadMs = least <= 0 && databaseMs - sentMs >= 0 ? 0 : least;
    this.#readingMs = readingMs;
    this.#readAtMs = answeredMs;
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
