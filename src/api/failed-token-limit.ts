// Failed credential attempts per source address, for a server that checks API tokens itself
// (SVC_AUTH=token). Without it an address could try tokens as fast as the server answered, each
// unknown one a database lookup and an entry in the token cache (which starts over when full,
// dropping every real token's lookup). Not used in gateway mode: every request then comes from
// the gateway's address, which limits each client's refused requests itself (docs/gateway.md).
import { hashApiToken, looksLikeApiToken } from '../auth/api-token.ts';
import { RateLimiter, TakenTokens, type RateVerdict } from '../rate-limit.ts';

/** How often, at most, an address past its limit makes the server read its live tokens again. */
const LIVE_REFRESH_MS = 1_000;

/**
 * The digests of the live tokens, read whole (a few rows) at most once per LIVE_REFRESH_MS, when
 * one asked about is not among them (it may have been made since). Lets a limited address's good
 * token through without a lookup per made-up one: however many an address sends, they cost one
 * read a second, and learn nothing (each is refused 429 as before).
 */
class LiveTokens {
  readonly #read: () => Promise<string[]>;
  #digests = new Set<string>();
  #readAt = -Infinity;
  #reading: Promise<void> | undefined;

  constructor(read: () => Promise<string[]>) {
    this.#read = read;
  }

  async has(digest: string): Promise<boolean> {
    if (this.#digests.has(digest)) return true;
    if (performance.now() - this.#readAt >= LIVE_REFRESH_MS) {
      // Concurrent askers share one read; a failed read (the database away) throws to each: the
      // request is then answered as any other needing the database is.
      this.#reading ??= this.#read()
        .then((digests) => {
          this.#digests = new Set(digests);
          this.#readAt = performance.now();
        })
        .finally(() => (this.#reading = undefined));
    }
    await this.#reading;
    return this.#digests.has(digest);
  }
}

/**
 * Counts refused credentials per source; a source past `perMinute` of them (SVC_AUTH_FAILURES_PER_MINUTE)
 * is refused (429) until its window ends, but for a live token: one this server took within the
 * last minute, or one among the live tokens `readLive` lists. So a caller behind the same address
 * (a NAT, a proxy, a task on this host sending made-up tokens beside the CLI) is never held back by
 * another's failures, while a made-up token gets no lookup of its own and no answer but 429.
 */
export class FailedTokenLimit {
  readonly #failures: RateLimiter;
  readonly #taken = new TakenTokens();
  readonly #live: LiveTokens;

  constructor(perMinute: number, readLive: () => Promise<string[]>) {
    this.#failures = new RateLimiter(perMinute);
    this.#live = new LiveTokens(readLive);
  }

  /** Whether a request from `source` with `token` (undefined: another credential) may be checked now. */
  async admit(source: string, token: string | undefined): Promise<RateVerdict> {
    if (token !== undefined && this.#taken.has(hashApiToken(token))) return { ok: true };
    const verdict = this.#failures.over(source);
    if (verdict.ok || token === undefined || !looksLikeApiToken(token)) return verdict;
    return (await this.#live.has(hashApiToken(token))) ? { ok: true } : verdict;
  }

  /** Records the outcome of checking `token` (undefined: another credential) from `source`. */
  record(source: string, token: string | undefined, taken: boolean): void {
    if (token !== undefined) this.#taken.record(hashApiToken(token), taken);
    if (!taken) this.#failures.hit(source);
  }
}
