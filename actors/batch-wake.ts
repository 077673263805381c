/**
 * Wakes this server's batch processors when it has accepted a batch: the accept commits without a
 * NOTIFY (docs/architecture.md, Asynchronous batch intake), so processors of other servers find
 * the batch at their next poll instead.
 */
export class BatchWake {
  #generation = 0;
  readonly #waiters = new Set<() => void>();

  /** Counts the wake-ups: a processor reads it before it looks for batches and sleeps only if no wake-up came since. */
  get generation(): number {
    return this.#generation;
  }

  wake(): void {
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
