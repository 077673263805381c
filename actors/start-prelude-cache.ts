import type { CatalogHead } from '../src/db/catalog.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { startPrelude } from '../src/db/start-prelude.ts';

/** Most execution ids fetched ahead at once; a restart skips the unused ones (ids are unique, not dense). */
export const MAX_ID_BLOCK = 256;
// Ids are fetched ahead only while starts keep coming: a refill this long after the last one
// takes just what its batch needs, so a quiet server hands out dense ids.
const ID_BLOCK_DECAY_MS = 1_000;
/**
 * Ids fetched ahead are let go after this long unused: retention takes a range whose ids were all
 * handed out by the sequence for spent (src/partitions/event-partitions.ts), and an id held past
 * its range's drop would start an execution there.
 */
export const ID_HOLD_MS = 10_000;
const MAX_HEADS = 1_000;

/** Heads and ids for one start batch; `cached` are heads taken from memory, which the batch's write must verify. */
export type StartPrelude = { heads: Map<string, CatalogHead>; ids: number[]; cached: CatalogHead[] };

/**
 * What a start batch needs before it can write (the newest catalog version of each path and new
 * execution ids), from memory when this server has it, so that a batch costs one round trip (its
 * write) instead of two. A cached head may be stale (another server registered a version): the
 * write checks it (Fold.checkHeads) and the batch is redone after `forgetHeads()`.
 */
export class StartPreludeCache {
  readonly #heads = new Map<string, CatalogHead>();
  #ids: number[] = [];
  #block = 0;
  #lastRefillAt = -Infinity;
  #idsFetchedAt = -Infinity;
  readonly #now: () => number;

  /** `now`: a clock in ms (tests pass their own). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  async take(q: Queryable, paths: string[], n: number): Promise<StartPrelude> {
    const unique = [...new Set(paths)];
    const now = this.#now();
    if (now - this.#idsFetchedAt > ID_HOLD_MS) this.#ids = [];
    if (this.#ids.length >= n && unique.every((p) => this.#heads.has(p))) {
      const heads = new Map(unique.map((p) => [p, this.#heads.get(p)!]));
      return { heads, ids: this.#ids.splice(0, n), cached: [...heads.values()] };
    }
    this.#block = now - this.#lastRefillAt < ID_BLOCK_DECAY_MS ? Math.min(MAX_ID_BLOCK, Math.max(n, this.#block * 2)) : n;
    this.#lastRefillAt = now;
    // The ids in memory are this take's while it waits: takes may overlap (webhook batches of
    // several triggers, a NATS subscription's messages), and one served from memory meanwhile
    // must not leave this one short.
    const reserved = this.#ids;
    this.#ids = [];
    let fetched: Awaited<ReturnType<typeof startPrelude>>;
    try {
      fetched = await startPrelude(q, unique, Math.max(0, this.#block - reserved.length)); // block >= n
    } catch (err) {
      this.#keep(reserved);
      throw err;
    }
    const ids = [...reserved, ...fetched.ids];
    this.#idsFetchedAt = now;
    this.#keep(ids.slice(n));
    for (const [path, head] of fetched.heads) this.#remember(path, head);
    // Heads just read need no check; paths without one are unknown (never cached as such).
    return { heads: fetched.heads, ids: ids.slice(0, n), cached: [] };
  }

  /** Puts ids back for later takes, lowest first (so a run of takes hands them out in order). */
  #keep(ids: readonly number[]): void {
    if (ids.length) this.#ids = [...this.#ids, ...ids].sort((a, b) => a - b);
  }

  /** Drops every cached head: the next batch reads them again. */
  forgetHeads(): void {
    this.#heads.clear();
  }

  #remember(path: string, head: CatalogHead): void {
    this.#heads.delete(path);
    if (this.#heads.size >= MAX_HEADS) this.#heads.delete(this.#heads.keys().next().value!);
    this.#heads.set(path, head);
  }
}
