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

type Entry = { until: number; identity: Promise<Identity | undefined> };

/**
 * API token lookups by hash, each trusted for API_TOKEN_CACHE_TTL_MS, so a busy client costs a
 * hash and a map lookup per request and one statement (which stamps last_used_at) per period.
 * Concurrent requests with one token share one lookup; a failed lookup is not kept.
 */
export class ApiTokenCache {
  readonly #db: Queryable;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Entry>();

  constructor(db: Queryable, ttlMs = API_TOKEN_CACHE_TTL_MS) {
    this.#db = db;
    this.#ttlMs = ttlMs;
  }

  /** The identity of a live token, or undefined for an unknown or revoked one. */
  lookup(token: string): Promise<Identity | undefined> {
    const hash = hashApiToken(token);
    const now = performance.now();
    const cached = this.#entries.get(hash);
    if (cached && cached.until > now) return cached.identity;
    if (this.#entries.size >= API_TOKEN_CACHE_MAX_ENTRIES) this.#entries.clear();
    const identity = useApiToken(this.#db, hash).then((row): Identity | undefined =>
      row && isRole(row.role) ? Object.freeze({ sub: row.name, role: row.role, via: 'token' }) : undefined,
    );
    const entry = { until: now + this.#ttlMs, identity };
    this.#entries.set(hash, entry);
    identity.catch(() => {
      if (this.#entries.get(hash) === entry) this.#entries.delete(hash);
    });
    return identity;
  }
}
