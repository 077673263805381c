import { EVENT } from '../machines/event-types.ts';
import type { BenchService } from './service.ts';
import { round } from './stats.ts';
import { eventTimeMs } from './step-overhead.ts';

export const SHORT_LOOP_ITEMS = 100;

/** What one item of a sequential noop loop costs, and how big the rows are that each item rewrites. */
export type LoopItemCost = {
  items: number;
  /** (last − first command.completed) / (items − 1), from the event log. */
  msPerItem: number;
  /** Largest `core.command.input` of the execution (each item's command carries its render context). */
  commandInputChars: number;
  /** `core.execution.snapshot` at the end (rewritten by every routing transaction). */
  snapshotChars: number;
};

/** Per-item cost of a finished sequential-loop execution. */
export async function loopItemCost(s: BenchService, executionId: number, items: number): Promise<LoopItemCost> {
  const events = await s.events(executionId);
  const done = events.filter((e) => e.event_type === EVENT.commandCompleted).map((e) => eventTimeMs(String(e.created_at)));
  const { rows } = await s.svc.deps.db.query<{ snapshot: number | null; input: number | null }>(
    `SELECT length(e.snapshot::text) AS snapshot, (SELECT max(length(c.input::text)) FROM core.command c WHERE c.execution_id = e.execution_id) AS input
       FROM core.execution e WHERE e.execution_id = $1`,
    [executionId],
  );
  return {
    items,
    msPerItem: round((done.at(-1)! - done[0]) / Math.max(1, done.length - 1), 3),
    commandInputChars: rows[0]?.input ?? 0,
    snapshotChars: rows[0]?.snapshot ?? 0,
  };
}

/** Runs a SHORT_LOOP_ITEMS-item sequential loop on one worker slot and returns its per-item cost. */
export async function measureShortLoop(s: BenchService, path: string): Promise<LoopItemCost> {
  const w = await s.worker(1);
  try {
    const id = await s.run(path, { items: Array.from({ length: SHORT_LOOP_ITEMS }, (_, i) => i) });
    const done = await s.wait(id, 20);
    if (done.execution.status !== 'completed') throw new Error(`loop execution ${id} ended ${String(done.execution.status)}`);
    return await loopItemCost(s, id, SHORT_LOOP_ITEMS);
  } finally {
    await w.stop();
  }
}
