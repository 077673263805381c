// Fixed-window request counters per key (an identity or an address), in this process: the
// gateway's limits, and the server's on failed API-token attempts (src/api/failed-token-limit.ts).

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

  /** Whether `key` is past the limit in its current window, without counting a request. */
  over(key: string): RateVerdict {
    const t = this.#now();
    const w = this.#windows.get(key);
    if (!w || w.resetAt <= t || w.count < this.#perWindow) return { ok: true };
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

/**
 * API tokens (by their digest) the server took lately: it answered a request with one other than
 * 401. Any other token may be made up, so its request counts against its address (the gateway,
 * which cannot check a token itself) or is refused once its address is past its failures (the
 * server): otherwise a made-up token per request got a window of its own each time and was never
 * limited, while a token in use is never held back by another caller's failures. Remembered
 * RATE_WINDOW_MS after the last answer.
 */
export class TakenTokens {
  readonly #until = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** True when the server took the token of `key` within the last window. */
  has(key: string): boolean {
    return (this.#until.get(key) ?? 0) > this.#now();
  }

  /** Records the server's answer to a request with the token of `key`: `taken` unless it was 401. */
  record(key: string, taken: boolean): void {
    this.#until.delete(key);
    if (!taken) return;
    const t = this.#now();
    if (this.#until.size >= MAX_KEYS) {
      for (const [k, until] of this.#until) if (until <= t) this.#until.delete(k);
      // Still full: the oldest go (they count against their address until used again).
      for (const k of this.#until.keys()) {
        if (this.#until.size < MAX_KEYS) break;
        this.#until.delete(k);
      }
    }
    this.#until.set(key, t + RATE_WINDOW_MS);
  }
}
