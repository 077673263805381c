import { hashApiToken } from '../auth/api-token.ts';
import type { Identity } from '../auth/identity.ts';
import { isRole } from '../auth/roles.ts';
import { useApiToken } from '../db/api-token.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { isDatabaseUnavailable } from '../db/classify-database-error.ts';

/** How long a token lookup is trusted: a revoked token stops working within this long. */
export const API_TOKEN_CACHE_TTL_MS = 5_000;
// Past this many cached lookups (unknown tokens count too) the cache starts over, so a caller
// sending random tokens cannot grow it without bound.
const API_TOKEN_CACHE_MAX_ENTRIES = 10_000;
/**
 * How long a token last found live still names its caller while the database is away: what needs
 * no database (/metrics, /health) keeps answering a Prometheus scrape through the outage it should
 * show. Every other route needs the database, and answers 503 whoever calls.
 */
export const API_TOKEN_OUTAGE_GRACE_MS = 15 * 60_000;

/** What a lookup found: the caller of a live token, a token past its expiry, or none (unknown or revoked). */
export type ApiTokenAnswer = { identity: Identity } | { expiredAt: Date } | undefined;

/** A token's caller as last found live, and until when that holds should the database be away. */
type Live = { identity: Identity; graceUntil: number };
type Entry = { until: number; answer: Promise<ApiTokenAnswer>; live: Live | undefined };

/**
 * API token lookups by hash, each trusted for API_TOKEN_CACHE_TTL_MS, so a busy client costs a
 * hash and a map lookup per request and one statement (which stamps last_used_at) per period.
 * A live token's answer is trusted no later than its expiry. Concurrent requests with one token
 * share one lookup; a failed lookup is not kept. With the database away, a token found live within
 * API_TOKEN_OUTAGE_GRACE_MS (and not expired since) keeps its caller; any other lookup fails.
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
    const entry: Entry = { until: now + this.#ttlMs, answer: Promise.resolve(undefined), live: cached?.live };
    entry.answer = useApiToken(this.#db, hash).then(
      (row): ApiTokenAnswer => {
        entry.live = undefined;
        if (!row || !isRole(row.role)) return undefined;
        if (row.expired) return { expiredAt: row.expires_at };
        // The time left is the database's, measured after `now` was taken here: the entry ends at
        // or before the expiry, whatever this machine's wall clock says.
        if (row.leftMs !== null) entry.until = Math.min(entry.until, now + row.leftMs);
        const identity: Identity = Object.freeze({ sub: row.name, role: row.role, via: 'token' });
        entry.live = { identity, graceUntil: Math.min(now + API_TOKEN_OUTAGE_GRACE_MS, row.leftMs === null ? Infinity : now + row.leftMs) };
        return { identity };
      },
      (err: unknown): ApiTokenAnswer => {
        if (isDatabaseUnavailable(err) && entry.live && entry.live.graceUntil > performance.now()) return { identity: entry.live.identity };
        throw err;
      },
    );
    this.#entries.set(hash, entry);
    entry.answer.catch(() => {
      if (this.#entries.get(hash) === entry) this.#entries.delete(hash);
    });
    return entry.answer;
  }
}
