import { hashApiToken } from '../auth/api-token.ts';
import type { Identity } from '../auth/identity.ts';
import { isRole } from '../auth/roles.ts';
import { useApiToken } from '../db/api-token.repo.ts';
import type { Queryable } from '../db/queryable.ts';

/** How long a token lookup is trusted: a revoked token stops working within this long. */
export const API_TOKEN_CACHE_TTL_MS = 5_000;
// Past this many cached lookups (unknown tokens count too) the cache starts over, so a caller
// sending random tokens cannot grow it without bound.
const API_TOKEN_CACHE_MAX_ENTRIES = 10_000;

/** What a lookup found: the caller of a live token, a token past its expiry, or none (unknown or revoked). */
export type ApiTokenAnswer = { identity: Identity } | { expiredAt: Date } | undefined;

type Entry = { until: number; answer: Promise<ApiTokenAnswer> };

/**
 * API token lookups by hash, each trusted for API_TOKEN_CACHE_TTL_MS, so a busy client costs a
 * hash and a map lookup per request and one statement (which stamps last_used_at) per period.
 * A live token's answer is trusted no later than its expiry. Concurrent requests with one token
 * share one lookup; a failed lookup is not kept.
 */
export class ApiTokenCache {
  readonly #db: Queryable;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Entry>();

  constructor(db: Queryable, ttlMs = API_TOKEN_CACHE_TTL_MS) {
    this.#db = db;
    this.#ttlMs = ttlMs;
  }

  /** The identity of a live token, when an expired one expired, or undefined for an unknown or revoked one. */
  lookup(token: string): Promise<ApiTokenAnswer> {
    const hash = hashApiToken(token);
    const now = performance.now();
    const cached = this.#entries.get(hash);
    // A hit whose lookup was still running learns its end only when it answers: a live answer
    // counts only if the entry still held at this request's time (the token may expire meanwhile).
    if (cached && cached.until > now) return cached.answer.then((a) => (cached.until > now ? a : this.lookup(token)));
    if (this.#entries.size >= API_TOKEN_CACHE_MAX_ENTRIES) this.#entries.clear();
    const entry: Entry = { until: now + this.#ttlMs, answer: Promise.resolve(undefined) };
    entry.answer = useApiToken(this.#db, hash).then((row): ApiTokenAnswer => {
      if (!row || !isRole(row.role)) return undefined;
      if (row.expired) return { expiredAt: row.expires_at };
      // The time left is the database's, measured after `now` was taken here: the entry ends at
      // or before the expiry, whatever this machine's wall clock says.
      if (row.leftMs !== null) entry.until = Math.min(entry.until, now + row.leftMs);
      return { identity: Object.freeze({ sub: row.name, role: row.role, via: 'token' }) };
    });
    this.#entries.set(hash, entry);
    entry.answer.catch(() => {
      if (this.#entries.get(hash) === entry) this.#entries.delete(hash);
    });
    return entry.answer;
  }
}
