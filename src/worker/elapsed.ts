/**
 * The time since a moment of this process's monotonic clock, written as whole milliseconds when
 * serialised: a report's events carry how long ago each one happened as of the moment the report
 * is sent (a report sent again after a failure says so again, afresh). The server subtracts it
 * from the time it received the report: ordering never trusts the worker's wall clock.
 */
export class Elapsed {
  readonly #since: number;

  constructor(since = performance.now()) {
    this.#since = since;
  }

  toJSON(): number {
    return Math.max(0, Math.round(performance.now() - this.#since));
  }
}

/**
 * The moments of one command (performance.now() readings), reported on one grid of whole
 * milliseconds from its start: a moment's `ago_ms` is the start's age less the moment's offset
 * from the start, and a length is the difference of two offsets. Rounded each on its own, a
 * task's start plus its length could end 1 ms after its command, or an attempt start before the
 * one before it ended (the Gantt's bars and the trace's spans then stick out of their parents).
 * On one grid the server's times keep the order the moments had.
 */
export class Moments {
  readonly #start: Elapsed;
  readonly #t0: number;

  constructor(t0 = performance.now()) {
    this.#t0 = t0;
    this.#start = new Elapsed(t0);
  }

  #offset(t: number): number {
    return Math.max(0, Math.round(t - this.#t0));
  }

  /** Moment `t`'s age when the report is written (as Elapsed, serialised then). */
  ago(t: number): { toJSON(): number } {
    const offset = this.#offset(t);
    return { toJSON: () => Math.max(0, this.#start.toJSON() - offset) };
  }

  /** Whole milliseconds from `from` to `to` on the grid. */
  between(from: number, to: number): number {
    return Math.max(0, this.#offset(to) - this.#offset(from));
  }
}
