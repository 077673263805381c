// Fixed-window request counters per key (an identity or an address), in this process.

/** The window every limit counts over, in ms. */
export const RATE_WINDOW_MS = 60_000;
/** Keys remembered at most; beyond, windows that have ended are dropped first, then the oldest. */
const MAX_KEYS = 100_000;

export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export class RateLimiter {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();

  readonly #perWindow: number;
  readonly #now: () => number;

  constructor(perWindow: number, now: () => number = Date.now) {
    this.#perWindow = perWindow;
    this.#now = now;
  }

  /** Counts one request of `key`; refuses it (with the seconds until the window ends) past the limit. */
  hit(key: string): RateVerdict {
    const t = this.#now();
    let w = this.#windows.get(key);
    if (!w || w.resetAt <= t) {
      if (!w && this.#windows.size >= MAX_KEYS) this.#sweep(t);
      w = { count: 0, resetAt: t + RATE_WINDOW_MS };
      this.#windows.set(key, w);
    }
    w.count++;
    if (w.count <= this.#perWindow) return { ok: true };
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((w.resetAt - t) / 1000)) };
  }

  #sweep(t: number): void {
    for (const [k, w] of this.#windows) if (w.resetAt <= t) this.#windows.delete(k);
    for (const k of this.#windows.keys()) {
      if (this.#windows.size < MAX_KEYS) break;
      this.#windows.delete(k);
    }
  }
}
