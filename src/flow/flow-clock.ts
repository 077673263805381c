/**
 * Tells this server's admitter (./admitter.ts) of flow work after a commit: an execution queued
 * (due at a time: now, or when its debounce window closes), a slot given back (an admitted
 * execution ended), or a limit's commands claimed here. A freed slot wakes the admitter only while
 * queued work is known to exist: most executions are admitted at their start, and a look that
 * finds nothing to admit is waste.
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
   * Commands of a limit were claimed: a rate's bucket went down. The admitter looks, to wake
   * claimers when it refills (nobody else knows when; it told them of the room this claim took).
   */
  drawn(): void {
    this.#listener?.drawn();
  }

  /** The admitter's ear (one per server). */
  listen(listener: FlowListener | undefined): void {
    this.#listener = listener;
  }
}

export type FlowListener = { queued(atMs: number): void; freed(): void; drawn(): void };
