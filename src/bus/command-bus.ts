/** Wakes waiting claimers when commands are issued. Implementations: postgres.ts (LISTEN/NOTIFY). */
export type CommandBus = {
  /** Resolves true on the next notification, false after timeoutMs or when the signal aborts. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** False while the transport cannot deliver notifications (claimers then wait out their poll interval). */
  readonly connected: boolean;
  /**
   * Announces again that `count` commands wait (the reaper, for commands whose notification was
   * missed or whose claim was let go: `stranded`). Transactions that issue commands notify as they commit.
   */
  publish(count: number, stranded: boolean): Promise<void>;
  /**
   * True while stranded commands were announced (by any server) within STRANDED_HINT_MS: only
   * then do claims look beyond PENDING commands, so the claim path pays nothing otherwise.
   */
  strandedHeard(): boolean;
  close(): Promise<void>;
};

/**
 * How long an announcement of stranded commands keeps claims looking for them: longer than the
 * reaper's default interval, since it announces them again at each sweep until they are claimed.
 */
const STRANDED_HINT_MS = 120_000;

/** When stranded commands were last announced (see CommandBus.strandedHeard). */
export class StrandedHint {
  #until = 0;

  heard(): void {
    this.#until = performance.now() + STRANDED_HINT_MS;
  }

  active(): boolean {
    return performance.now() < this.#until;
  }
}

/** Fan-out of notifications to waiters; the transport only calls `notify()`. */
export class Waiters {
  #waiting = new Set<() => void>();
  #arrived: (() => void)[] = [];

  #closed = false;

  /** Resolves once someone waits (at once if someone does, or after close()): a bus that pulls only for waiting claimers. */
  someoneWaiting(): Promise<void> {
    if (this.#waiting.size || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#arrived.push(resolve));
  }

  /** Wakes every waiter and ends every someoneWaiting(), now and later (the bus is closing). */
  close(): void {
    this.#closed = true;
    this.notify();
    for (const arrived of this.#arrived.splice(0)) arrived();
  }

  /** Whether a claimer waits now (one just woken waits again only once its look found nothing). */
  get waiting(): boolean {
    return this.#waiting.size > 0;
  }

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
      for (const arrived of this.#arrived.splice(0)) arrived();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A bus that hears nothing from the database: claimers fall back to their poll interval. */
export function createLocalBus(): CommandBus & { notify(): void } {
  const waiters = new Waiters();
  const stranded = new StrandedHint();
  return {
    next: (timeoutMs, signal) => waiters.next(timeoutMs, signal),
    connected: true, // nothing to lose: notify() is a call in this process
    notify: () => waiters.notify(),
    async publish(_count, isStranded) {
      if (isStranded) stranded.heard();
      waiters.notify();
    },
    strandedHeard: () => stranded.active(),
    async close() {
      waiters.notify();
    },
  };
}
