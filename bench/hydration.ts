import { isDeepStrictEqual } from 'node:util';
import { hydrate, replay } from '../actors/hydrate.ts';
import { HotSnapshots } from '../actors/hot-snapshots.ts';
import { FOLDING_EVENT_TYPES } from '../machines/event-types.ts';
import { getExecution, loadEventsAfter } from '../src/db/execution.repo.ts';
import { loopItemCost, type LoopItemCost } from './loop-cost.ts';
import { fmt, type Row } from './report.ts';
import { api, type BenchService } from './service.ts';
import { median, round, sleep } from './stats.ts';

// Six events per item (loop.item, command.issued, .claimed, .started, call.done, command.completed) plus a few: ~10,000.
export const LOOP_ITEMS = 1_665;
export const REPEATS = 5;
// Issue 26: hydrating a 10,000-event execution.
const HYDRATION_TARGET_MS = 50;
const WAIT_POLL_MS = 50;
const BUILD_TIMEOUT_MS = 120_000;

type Timing = { median: number; samples: number[] };

export type HydrationResult = {
  loopItems: number;
  events: number;
  /** Pure fold of the whole log with replay() (in memory, no I/O): median of REPEATS. */
  replayMs: Timing;
  /** Loading the whole log from PostgreSQL (loadEventsAfter, every event and column) and folding it all. */
  loadAndReplayMs: Timing;
  /**
   * hydrate() of the running execution by a server that does not hold it: its row, stored
   * snapshot and the events after it in one statement, folded (the snapshot is written every 64
   * events and whenever the execution waits).
   */
  hydrateMs: Timing;
  /**
   * The same with no usable stored snapshot (one of another machine version, as after an
   * upgrade): the row and every folding event of the log in one statement, folded from the start.
   */
  hydrateNoSnapshotMs: Timing;
  /** Events the snapshot-less hydration read and folded (of `events`). */
  foldedEvents: number;
  /** Building the log: one worker slot running the sequential loop; what each item cost. */
  build: LoopItemCost & { wallMs: number };
  /** The three folds (whole log, snapshot-less hydration, hydration from the snapshot) reach the same state. */
  finalStateMatches: boolean;
};

async function timed(run: () => Promise<unknown> | unknown): Promise<Timing> {
  await run(); // warm-up (JIT)
  const samples: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t = performance.now();
    await run();
    samples.push(performance.now() - t);
  }
  return { median: round(median(samples), 2), samples: samples.map((x) => round(x, 2)) };
}

/**
 * Builds a ~10,000-event execution by running a sequential loop of LOOP_ITEMS noop items on one
 * worker slot up to a step that waits for a signal (`path`: sequentialLoopPlaybook with `hold`),
 * then times folding its whole log and hydrating it as a server that never held it would; the
 * signal then lets it finish.
 */
export async function measureHydration(s: BenchService, opts: { path: string }): Promise<HydrationResult> {
  const db = s.svc.deps.db;
  const w = await s.worker(1);
  let id: number;
  let buildMs: number;
  try {
    const items = Array.from({ length: LOOP_ITEMS }, (_, i) => i);
    const t0 = performance.now();
    id = await s.run(opts.path, { items });
    for (;;) {
      const { rows } = await db.query<{ waits: boolean; status: string }>(
        `SELECT EXISTS (SELECT 1 FROM core.wait w WHERE w.execution_id = e.execution_id) AS waits, e.status FROM core.execution e WHERE e.execution_id = $1`,
        [id],
      );
      if (rows[0]?.waits) break;
      if (rows[0]?.status !== 'running') throw new Error(`hydration log execution ${id} is ${String(rows[0]?.status)}, not waiting`);
      if (performance.now() - t0 > BUILD_TIMEOUT_MS) throw new Error(`hydration log execution ${id} not waiting after ${BUILD_TIMEOUT_MS} ms`);
      await sleep(WAIT_POLL_MS);
    }
    buildMs = performance.now() - t0;
  } finally {
    await w.stop();
  }
  const row = await getExecution(db, id);
  if (!row) throw new Error(`execution ${id} vanished`);
  const cache = s.svc.deps.cache;
  const machine = (await cache.get(db, row.catalog_id)).machine;
  const log = await loadEventsAfter(db, id, 0);
  const whole = replay(machine, log);
  const replayMs = await timed(() => replay(machine, log));
  const loadAndReplayMs = await timed(async () => replay(machine, await loadEventsAfter(db, id, 0)));
  // A new HotSnapshots each time: nothing held in memory, as on a server that never routed it.
  const cold = async () => (await hydrate(db, cache, new HotSnapshots(), [id], [], 'all')).executions[0];
  const fromSnapshot = await cold();
  const hydrateMs = await timed(cold);
  // A stored snapshot of another machine version is not used: the whole log is folded again.
  await db.query(`UPDATE core.execution SET machine_version = machine_version - 1000 WHERE execution_id = $1`, [id]);
  const { rows: folded } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM core.event v WHERE v.execution_id = $1 AND (v.event_id > $2 OR v.event_type = ANY($3::text[]))`,
    [id, row.applied_event_id, [...FOLDING_EVENT_TYPES]],
  );
  const noSnapshot = await cold();
  const hydrateNoSnapshotMs = await timed(cold);
  await db.query(`UPDATE core.execution SET machine_version = machine_version + 1000 WHERE execution_id = $1`, [id]);
  await api(s.url, 'POST', `/api/executions/${id}/signals/go`, {});
  // Deep equality, not JSON text: a snapshot read back from jsonb has its keys in another order.
  const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b);
  const state = (x: { value: unknown; context: unknown } | null | undefined) => (x ? { value: x.value, context: x.context } : null);
  return {
    loopItems: LOOP_ITEMS,
    events: log.length,
    replayMs,
    loadAndReplayMs,
    hydrateMs,
    hydrateNoSnapshotMs,
    foldedEvents: folded[0].n,
    build: { ...(await loopItemCost(s, id, LOOP_ITEMS)), wallMs: round(buildMs, 0) },
    finalStateMatches: whole !== null && same(state(whole), state(noSnapshot?.snapshot)) && same(state(whole), state(fromSnapshot?.snapshot)),
  };
}

/** The table's rows: both hydrations against the target (met only when the folds agree), then the whole-log figures. */
export function hydrationRows(h: HydrationResult): Row[] {
  const row = (figure: string, ms: number, target: boolean): Row => ({
    figure,
    value: `${fmt(ms, 1)} ms`,
    baseline: '',
    ratio: '',
    target: target ? `<= ${HYDRATION_TARGET_MS} ms` : '',
    verdict: target ? (ms <= HYDRATION_TARGET_MS && h.finalStateMatches ? 'met' : 'MISSED') : '',
  });
  return [
    row(`hydration of ${h.events} events, no stored snapshot (${h.foldedEvents} fold)`, h.hydrateNoSnapshotMs.median, true),
    row(`hydration of ${h.events} events, from its stored snapshot`, h.hydrateMs.median, true),
    row(`  the whole log: replay() of ${h.events} events`, h.replayMs.median, false),
    row('  the whole log: loaded (every event and column) + replay()', h.loadAndReplayMs.median, false),
  ];
}
