import { replay } from '../actors/hydrate.ts';
import { getExecution, loadEventsAfter } from '../src/db/execution.repo.ts';
import { loopItemCost, type LoopItemCost } from './loop-cost.ts';
import type { BenchService } from './service.ts';
import { median, round } from './stats.ts';

// Six events per item (loop.item, command.issued, .claimed, .started, call.done, command.completed) plus a few: ~10,000.
export const LOOP_ITEMS = 1_665;
export const REPEATS = 5;

export type HydrationResult = {
  loopItems: number;
  events: number;
  /** Pure fold of the whole log with replay() (in memory, no I/O): median of REPEATS. */
  replayMs: { median: number; samples: number[] };
  /** Loading the whole log from PostgreSQL (loadEventsAfter) and folding it: what a snapshot-less hydration costs. */
  loadAndReplayMs: { median: number; samples: number[] };
  /** Building the log: one worker slot running the sequential loop; what each item cost. */
  build: LoopItemCost & { wallMs: number };
  finalStatusMatches: boolean;
};

/**
 * Builds a ~10,000-event execution by running a sequential loop of LOOP_ITEMS noop items to
 * completion on one worker slot, then times folding its whole log.
 */
export async function measureHydration(s: BenchService, opts: { path: string }): Promise<HydrationResult> {
  const w = await s.worker(1);
  let id: number;
  let buildMs: number;
  try {
    const items = Array.from({ length: LOOP_ITEMS }, (_, i) => i);
    const t0 = performance.now();
    id = await s.run(opts.path, { items });
    const done = await s.wait(id, 50, { timeoutMs: 120_000 });
    buildMs = performance.now() - t0;
    if (done.execution.status !== 'completed') throw new Error(`hydration log execution ${id} ended ${String(done.execution.status)}`);
  } finally {
    await w.stop();
  }
  const db = s.svc.deps.db;
  const row = await getExecution(db, id);
  if (!row) throw new Error(`execution ${id} vanished`);
  const machine = (await s.svc.deps.cache.get(db, row.catalog_id)).machine;
  const log = await loadEventsAfter(db, id, 0);
  let last = replay(machine, log); // warm-up (JIT)
  const replayMs: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t = performance.now();
    last = replay(machine, log);
    replayMs.push(performance.now() - t);
  }
  const loadAndReplayMs: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t = performance.now();
    replay(machine, await loadEventsAfter(db, id, 0));
    loadAndReplayMs.push(performance.now() - t);
  }
  return {
    loopItems: LOOP_ITEMS,
    events: log.length,
    replayMs: { median: round(median(replayMs), 2), samples: replayMs.map((x) => round(x, 2)) },
    loadAndReplayMs: { median: round(median(loadAndReplayMs), 2), samples: loadAndReplayMs.map((x) => round(x, 2)) },
    build: { ...(await loopItemCost(s, id, LOOP_ITEMS)), wallMs: round(buildMs, 0) },
    finalStatusMatches: String(last?.value) === row.status,
  };
}
