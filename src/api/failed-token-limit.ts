// Failed credential attempts per source address, for a server that checks API tokens itself
// (SVC_AUTH=token). Without it an address could try tokens as fast as the server answered, each
// unknown one a database lookup and an entry in the token cache (which starts over when full,
// dropping every real token's lookup). Not used in gateway mode: every request then comes from
// the gateway's address, which limits each client's refused requests itself (docs/gateway.md).
import { hashApiToken } from '../auth/api-token.ts';
import { RateLimiter, TakenTokens, type RateVerdict } from '../rate-limit.ts';

/**
 * Counts refused credentials per source; a source past `perMinute` of them (SVC_AUTH_FAILURES_PER_MINUTE)
 * is refused before any lookup until its window ends,
 * except with a token this server took within the last minute, so a caller in use behind the
 * same address (a NAT, a proxy) is not held back by another's failures.
 */
export class FailedTokenLimit {
  readonly #failures: RateLimiter;
  readonly #taken = new TakenTokens();

  constructor(perMinute: number) {
    this.#failures = new RateLimiter(perMinute);
  }

  /** Whether a request from `source` with `token` (undefined: another credential) may be checked now. */
  admit(source: string, token: string | undefined): RateVerdict {
    if (token !== undefined && this.#taken.has(hashApiToken(token))) return { ok: true };
    return this.#failures.over(source);
  }

  /** Records the outcome of checking `token` (undefined: another credential) from `source`. */
  record(source: string, token: string | undefined, taken: boolean): void {
    if (token !== undefined) this.#taken.record(hashApiToken(token), taken);
    if (!taken) this.#failures.hit(source);
  }
}
