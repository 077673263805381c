/** Wakes waiting claimers when commands are issued. Implementations: postgres.ts (LISTEN/NOTIFY). */
export type CommandBus = {
  /** Resolves true on the next notification, false after timeoutMs or when the signal aborts. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** False while the transport cannot deliver notifications (claimers then wait out their poll interval). */
  readonly connected: boolean;
  close(): Promise<void>;
};

/** Fan-out of notifications to waiters; the transport only calls `notify()`. */
export class Waiters {
  #waiting = new Set<() => void>();

  notify(): void {
    const all = [...this.#waiting];
    this.#waiting.clear();
    for (const wake of all) wake();
  }

  next(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal?.aborted || timeoutMs <= 0) return resolve(false);
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const wake = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#waiting.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A bus that hears nothing from the database: claimers fall back to their poll interval. */
export function createLocalBus(): CommandBus & { notify(): void } {
  const waiters = new Waiters();
  return {
    next: (timeoutMs, signal) => waiters.next(timeoutMs, signal),
    connected: true, // nothing to lose: notify() is a call in this process
    notify: () => waiters.notify(),
    async close() {
      waiters.notify();
    },
  };
}
