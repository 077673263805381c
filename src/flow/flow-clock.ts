/**
 * Tells this server's admitter (./admitter.ts) of flow work after a commit: an execution queued
 * (due at a time: now, or when its debounce window closes), a slot given back (an admitted
 * execution ended, a limit's command ended), or a limit's commands issued or claimed here. A freed slot wakes the
 * admitter only while queued work is known to exist: most executions are admitted at their
 * start, and a look that finds nothing to admit is waste.
 */
export class FlowClock {
  #listener: FlowListener | undefined;

  /** An execution was queued; it may be admitted from `atMs` (epoch ms) on. */
  queued(atMs: number): void {
    this.#listener?.queued(atMs);
  }

  /** An admitted execution ended (or a queued one did): its key may have room now. */
  freed(): void {
    this.#listener?.freed();
  }

  /**
   * Commands of these limits gave their slots back here (they ended). Executions queued on the
   * same limit (a playbook's `concurrency` naming a limit that tasks name too) may have room now.
   */
  freedOn(limits: readonly string[]): void {
    this.#listener?.freedOn(limits);
  }

  /**
   * Commands of these limits were issued or claimed here. Where a limit has a rate, the admitter
   * looks, to learn when the key's bucket has a token for what waits and wake claimers then
   * (nobody else knows when).
   */
  limited(limits: readonly string[]): void {
    this.#listener?.limited(limits);
  }

  /** The admitter's ear (one per server). */
  listen(listener: FlowListener | undefined): void {
    this.#listener = listener;
  }
}

export type FlowListener = { queued(atMs: number): void; freed(): void; freedOn(limits: readonly string[]): void; limited(limits: readonly string[]): void };
