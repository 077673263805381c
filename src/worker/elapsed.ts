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
