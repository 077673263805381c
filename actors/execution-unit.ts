import type { ClaimPolicy } from '../src/db/command.repo.ts';
import type { ExecutionRow } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { Claimer } from '../src/db/unit-write.ts';
import { Fold, type Folded } from './fold.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import { hydrate } from './hydrate.ts';
import type { PlaybookCache } from './playbook-cache.ts';
import { NO_READS, readNeeds, type Reads } from './prefetch.ts';
import { writeFolded, type Written } from './write.ts';

// A unit of work over a set of executions, along xstate's line, one file per step:
//   route (route-events.ts, start-execution.ts: what to fold, under which locks)
//   → hydrate (hydrate.ts: every read of state)
//   → transition (fold.ts: xstate's pure transition, effects returned; synchronous)
//   → rows (effect-rows.ts: effects as rows, from what was read before the fold)
//   → write (write.ts: one statement, src/db/unit-write.ts)
//   → publish (publish.ts: after commit, the state this process now holds).

export type UnitRun<T> = {
  /** The executions loaded for it (under their locks, or as this process committed them). */
  rows: readonly ExecutionRow[];
  /** No transaction is open: the write is the only statement and takes the locks itself. */
  singleStatement?: boolean;
  /**
   * Folds the unit's events or starts into `fold` and returns what the caller answers with. It is
   * run again on a fresh fold from the same hydration when effects lacked a read (a child
   * playbook's catalog entry, stored children to cancel, child ids), so it must start from nothing.
   */
  fold: (fold: Fold) => T;
  claims?: readonly Claimer[];
  claimPolicy?: ClaimPolicy | null;
  /** Measure the hydrate and write steps (for a route probe). */
  timed?: boolean;
};

export type UnitDone<T> = Written & { value: T; folded: Folded; hydrateMs: number; writeMs: number };

/**
 * Runs the line up to the write: hydrate, fold (again with the reads its effects lacked, until
 * none lacks any: reads happen between folds, never inside one), write. The caller commits, then
 * publishes `published` (publish.ts).
 */
export async function runUnit<T>(q: Queryable, cache: PlaybookCache, snapshots: HotSnapshots | undefined, run: UnitRun<T>): Promise<UnitDone<T>> {
  const t0 = run.timed ? performance.now() : 0;
  const hydrated = run.rows.length ? await hydrate(q, cache, snapshots, run.rows) : [];
  const hydrateMs = run.timed ? performance.now() - t0 : 0;
  let reads: Reads = NO_READS;
  for (;;) {
    const fold = new Fold(cache, hydrated, reads, { singleStatement: run.singleStatement });
    const value = run.fold(fold);
    const needs = fold.needs();
    if (needs) {
      reads = await readNeeds(q, reads, needs);
      continue;
    }
    const folded = fold.folded();
    const t1 = run.timed ? performance.now() : 0;
    const written = await writeFolded(q, folded, run.claims, run.claimPolicy ?? null);
    return { ...written, value, folded, hydrateMs, writeMs: run.timed ? performance.now() - t1 : 0 };
  }
}
