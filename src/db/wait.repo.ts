import { EXECUTION_COLUMNS, type ExecutionRow } from './execution.repo.ts';
import type { Queryable } from './queryable.ts';

// Reads of core.wait (its one writer is the unit write, src/db/unit-write.ts). The timekeeper
// (src/waits/timekeeper.ts) takes due waits by wait_due_idx; the API lists an execution's.

/**
 * A wait whose time came: a timer to fire, or a signal wait to time out. `last_event_id`: its
 * execution's, as the look read it (a server that remembers it at another id reads it afresh).
 */
export type DueWait = { execution_id: number; seq: number; step: string; kind: 'timer' | 'signal'; wake_at: Date; last_event_id: number };


/**
 * The timekeeper's look: up to its limit of due waits, earliest first, and the earliest wake-up
 * after them; `nextInMs`: how far ahead that is by the database's clock, which decides what is due;
 * `nowMs`: that clock's now() (epoch ms), from which this server counts the waits it writes
 * (a server's own clock may run ahead of it: sleeping by that, it would look again and again
 * until the database's caught up).
 */
export type WaitsLook = { due: DueWait[]; next: Date | null; nextInMs: number | null; nowMs: number };

/**
 * Waits due now of running executions (a paused one's wait until it is resumed), earliest first,
 * at most `limit`, by the partial index on wake_at, each execution's row by its key; and in the
 * same statement (one snapshot, one `now()`) the earliest wake-up still ahead, to sleep until
 * (null: none). No lock: the routing's guard decides which server fires a wait (the other finds
 * it over and appends nothing).
 */
export async function lookAtWaits(q: Queryable, limit: number): Promise<WaitsLook> {
  const { rows } = await q.query<{ next_at: Date | null; next_in_ms: number | null; now_ms: number } & { [K in keyof DueWait]: DueWait[K] | null }>({
    name: 'svc_look_at_waits',
    // One row at least (the next wake-up), with a due wait or NULLs beside it.
    text: `SELECT n.next_at, ceil(EXTRACT(EPOCH FROM n.next_at - now()) * 1000)::float8 AS next_in_ms, (EXTRACT(EPOCH FROM now()) * 1000)::float8 AS now_ms, d.execution_id, d.seq, d.step, d.kind, d.wake_at, d.last_event_id
             FROM (SELECT min(wake_at) AS next_at FROM core.wait WHERE wake_at > now()) n
             LEFT JOIN LATERAL (
               SELECT w.execution_id, w.seq, w.step, w.kind, w.wake_at, e.last_event_id
                 FROM core.wait w JOIN core.execution e ON e.execution_id = w.execution_id
                WHERE w.wake_at <= now() AND e.status = 'running'
                ORDER BY w.wake_at LIMIT $1) d ON true
            ORDER BY d.wake_at`,
    values: [limit],
  });
  const due = rows.flatMap((r) =>
    r.execution_id !== null && r.seq !== null && r.step !== null && r.kind !== null && r.wake_at !== null && r.last_event_id !== null
      ? [{ execution_id: Number(r.execution_id), seq: r.seq, step: r.step, kind: r.kind, wake_at: r.wake_at, last_event_id: Number(r.last_event_id) }]
      : [],
  );
  return { due, next: rows[0]?.next_at ?? null, nextInMs: rows[0]?.next_in_ms ?? null, nowMs: rows[0]?.now_ms ?? Date.now() };
}

/** When a step's wait wakes it (null: never) and since when it waits (its wait row's write). */
export type StepWake = { wakeAt: Date | null; since: Date };

/**
 * An execution's row and when each of its steps wakes (a timer fires, a signal wait times out;
 * null: never) and since when it waits: its first wait's (lowest seq), the one the execution's view describes of a step
 * with several. One statement, so one snapshot: a wait row is written by the statement that
 * writes the event beginning it (and moves `applied_event_id` on), so the view folded up to the
 * row's `applied_event_id` and these times agree. Two reads could see a step waiting whose wait
 * row the other had not seen yet (wake_at null for a moment).
 */
export async function readExecutionWakes(q: Queryable, executionId: number): Promise<{ row: ExecutionRow; wakes: Map<string, StepWake> } | undefined> {
  const { rows } = await q.query<ExecutionRow & { wakes: { step: string; wake_at: string | null; since: string }[] }>({
    name: 'svc_execution_wakes',
    text: `SELECT ${EXECUTION_COLUMNS},
                  COALESCE((SELECT json_agg(json_build_object('step', w.step, 'wake_at', w.wake_at, 'since', w.created_at))
                              FROM (SELECT DISTINCT ON (step) step, wake_at, created_at FROM core.wait WHERE execution_id = $1 ORDER BY step, seq) w), '[]') AS wakes
             FROM core.execution WHERE execution_id = $1`,
    values: [executionId],
  });
  const found = rows[0];
  if (!found) return undefined;
  const { wakes, ...row } = found;
  return { row, wakes: new Map(wakes.map((w) => [w.step, { wakeAt: w.wake_at === null ? null : new Date(w.wake_at), since: new Date(w.since) }])) };
}

/** The database's clock now (epoch ms), read once at a server's start (waits/read-database-clock.ts). */
export async function databaseNowMs(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ now_ms: number }>(`SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 AS now_ms`);
  return rows[0].now_ms;
}
