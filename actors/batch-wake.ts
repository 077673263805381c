/**
 * Wakes this server's batch processors when it has accepted a batch: the accept commits without a
 * NOTIFY (docs/architecture.md, Asynchronous batch intake). With a bus that carries it (NATS,
 * `announceWith`), the processors of every server are woken too; else they find the batch at
 * their next poll.
 */
export class BatchWake {
  #generation = 0;
  readonly #waiters = new Set<() => void>();
  #announce: (() => void) | undefined;

  /** How this server tells the others (undefined: it does not). */
  announceWith(announce: (() => void) | undefined): void {
    this.#announce = announce;
  }

  /** This server accepted a batch: its processors, and (announced) every server's, look. */
  wake(): void {
    this.heard();
    this.#announce?.();
  }

  /** Counts the wake-ups: a processor reads it before it looks for batches and sleeps only if no wake-up came since. */
  get generation(): number {
    return this.#generation;
  }

  /** A batch was accepted (here, or announced by another server): this server's processors look. */
  heard(): void {
    this.#generation++;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }

  /** Resolves at the first wake-up after `since` (the generation read), after `ms`, or when `signal` aborts. */
  wait(since: number, ms: number, signal: AbortSignal): Promise<void> {
    if (this.#generation !== since || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms).unref();
      signal.addEventListener('abort', done, { once: true });
      this.#waiters.add(done);
    });
  }
}
