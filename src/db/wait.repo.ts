import type { Queryable } from './queryable.ts';

// Reads of core.wait (its one writer is the unit write, src/db/unit-write.ts). The timekeeper
// (src/waits/timekeeper.ts) takes due waits by wait_due_idx; the API lists an execution's.

/** A wait whose time came: a timer to fire, or a signal wait to time out. */
export type DueWait = { execution_id: number; seq: number; step: string; kind: 'timer' | 'signal'; wake_at: Date };


/**
 * Waits due now of running executions (a paused one's wait until it is resumed), earliest first,
 * at most `limit`: by the partial index on wake_at, each execution's row by its key. No lock: the
 * routing's guard decides which server fires a wait (the other finds it over and appends nothing).
 */
export async function dueWaits(q: Queryable, limit: number): Promise<DueWait[]> {
  const { rows } = await q.query<DueWait>({
    name: 'svc_due_waits',
    text: `SELECT w.execution_id, w.seq, w.step, w.kind, w.wake_at
             FROM core.wait w JOIN core.execution e ON e.execution_id = w.execution_id
            WHERE w.wake_at <= now() AND e.status = 'running'
            ORDER BY w.wake_at LIMIT $1`,
    values: [limit],
  });
  return rows.map((r) => ({ ...r, execution_id: Number(r.execution_id) }));
}

/** The earliest wake-up time still ahead (null: none), to sleep until. */
export async function nextWake(q: Queryable): Promise<Date | null> {
  const { rows } = await q.query<{ wake_at: Date | null }>({
    name: 'svc_next_wake',
    text: `SELECT min(wake_at) AS wake_at FROM core.wait WHERE wake_at > now()`,
    values: [],
  });
  return rows[0]?.wake_at ?? null;
}

/** When each wait of an execution wakes (a timer fires, a signal wait times out; null: never), by step. */
export async function wakeTimesOf(q: Queryable, executionId: number): Promise<Map<string, Date | null>> {
  const { rows } = await q.query<{ step: string; wake_at: Date | null }>({
    name: 'svc_wake_times_of',
    text: `SELECT step, wake_at FROM core.wait WHERE execution_id = $1 ORDER BY seq`,
    values: [executionId],
  });
  return new Map(rows.map((r) => [r.step, r.wake_at]));
}
