import type { Queryable } from './queryable.ts';

// The one writer of core.trigger and core.trigger_fire (migrations/0015_triggers.sql).

/** The channel a registration notifies so that every server reloads its triggers (scheduler, subscriptions). */
export const TRIGGERS_CHANGED_CHANNEL = 'svc_triggers';

export type TriggerKindName = 'schedule' | 'webhook' | 'nats';

export type TriggerRow = {
  path: string;
  name: string;
  catalog_id: number;
  kind: TriggerKindName;
  spec: Record<string, unknown>;
  paused: boolean;
  next_fire_at: Date | null;
  fires: number;
  skipped: number;
  errors: number;
  last_error: string | null;
};

export type TriggerListRow = TriggerRow & { last_fire_key: string | null; last_execution_id: number | null; last_fired_at: Date | null; last_outcome: string | null };

export type FireOutcome = 'started' | 'skipped' | 'refused';

/** A fire as recorded: what it started (`execution_id`), or why it started nothing (`error`). */
export type FireRow = { fire_key: string; outcome: FireOutcome; execution_id: number | null; scheduled_time: Date | null; error: string | null };

const COLUMNS = `path, name, catalog_id, kind, spec, paused, next_fire_at, fires::float8 AS fires, skipped::float8 AS skipped, errors::float8 AS errors, last_error`;

/**
 * Makes `triggers` the live ones of `path` (call in the registration's transaction): each is
 * inserted or updated (a schedule keeps its next fire time unless its cron or timezone changed;
 * a pause is kept), those the version no longer declares are removed, and every server hears of it.
 * `firstFire` per schedule: its first fire after now, used when its time is computed afresh.
 */
export async function syncTriggers(
  q: Queryable,
  entry: { path: string; catalogId: number; triggers: { name: string; kind: TriggerKindName; spec: unknown; firstFire: Date | null }[] },
): Promise<void> {
  await q.query(
    `WITH gone AS (
       DELETE FROM core.trigger t WHERE t.path = $1 AND NOT (t.name = ANY($3::text[]))
     ), upsert AS (
       INSERT INTO core.trigger (path, name, catalog_id, kind, spec, next_fire_at)
       SELECT $1, x.name, $2, x.kind, x.spec, x.first_fire
         FROM jsonb_to_recordset($4::jsonb) AS x(name text, kind text, spec jsonb, first_fire timestamptz)
       ON CONFLICT (path, name) DO UPDATE SET
         catalog_id = EXCLUDED.catalog_id, kind = EXCLUDED.kind, spec = EXCLUDED.spec, updated_at = now(),
         next_fire_at = CASE WHEN core.trigger.kind = EXCLUDED.kind AND core.trigger.next_fire_at IS NOT NULL
                              AND core.trigger.spec->>'cron' IS NOT DISTINCT FROM EXCLUDED.spec->>'cron'
                              AND core.trigger.spec->>'timezone' IS NOT DISTINCT FROM EXCLUDED.spec->>'timezone'
                             THEN core.trigger.next_fire_at ELSE EXCLUDED.next_fire_at END
     )
     SELECT pg_notify('${TRIGGERS_CHANGED_CHANNEL}', $1)`,
    [entry.path, entry.catalogId, entry.triggers.map((t) => t.name), JSON.stringify(entry.triggers.map((t) => ({ name: t.name, kind: t.kind, spec: t.spec, first_fire: t.firstFire })))],
  );
}

/** Every live trigger with its last fire, ordered by path and name; optionally of one kind. */
export async function listTriggers(q: Queryable, kind?: TriggerKindName): Promise<TriggerListRow[]> {
  const { rows } = await q.query<TriggerListRow>(
    `SELECT ${COLUMNS.split(', ').map((c) => `t.${c}`).join(', ')},
            f.fire_key AS last_fire_key, f.execution_id AS last_execution_id, f.fired_at AS last_fired_at, f.outcome AS last_outcome
       FROM core.trigger t
       LEFT JOIN LATERAL (SELECT fire_key, execution_id, fired_at, outcome FROM core.trigger_fire
                           WHERE path = t.path AND name = t.name ORDER BY fired_at DESC LIMIT 1) f ON true
      WHERE ($1::text IS NULL OR t.kind = $1)
      ORDER BY t.path, t.name`,
    [kind ?? null],
  );
  return rows;
}

/** One live trigger; undefined when `path` declares none of that name. */
export async function getTrigger(q: Queryable, path: string, name: string): Promise<TriggerRow | undefined> {
  const { rows } = await q.query<TriggerRow>(`SELECT ${COLUMNS} FROM core.trigger WHERE path = $1 AND name = $2`, [path, name]);
  return rows[0];
}

/**
 * Pauses or resumes a trigger; a resumed schedule starts again from `nextFire` (what was due while
 * it was paused is not caught up). Undefined when there is no such trigger. Every server hears of it.
 */
export async function setTriggerPaused(q: Queryable, path: string, name: string, paused: boolean, nextFire: Date | null): Promise<TriggerRow | undefined> {
  const { rows } = await q.query<TriggerRow>(
    `WITH t AS (
       UPDATE core.trigger SET paused = $3, updated_at = now(),
              next_fire_at = CASE WHEN NOT $3 AND paused AND kind = 'schedule' THEN $4::timestamptz ELSE next_fire_at END
        WHERE path = $1 AND name = $2
       RETURNING ${COLUMNS}
     ), n AS (SELECT pg_notify('${TRIGGERS_CHANGED_CHANNEL}', $1) FROM t)
     SELECT t.* FROM t LEFT JOIN n ON true`,
    [path, name, paused, nextFire],
  );
  return rows[0];
}

/** Schedules due at `now` (not paused), earliest first. */
export async function dueSchedules(q: Queryable, now: Date, limit: number): Promise<TriggerRow[]> {
  const { rows } = await q.query<TriggerRow>(
    `SELECT ${COLUMNS} FROM core.trigger
      WHERE kind = 'schedule' AND NOT paused AND next_fire_at <= $1
      ORDER BY next_fire_at LIMIT $2`,
    [now, limit],
  );
  return rows;
}

/** The earliest next fire of any active schedule (null: none), so a scheduler sleeps until then. */
export async function earliestScheduledFire(q: Queryable): Promise<Date | null> {
  const { rows } = await q.query<{ at: Date | null }>(`SELECT min(next_fire_at) AS at FROM core.trigger WHERE kind = 'schedule' AND NOT paused`);
  return rows[0]?.at ?? null;
}

/** The recorded fires of a trigger among `keys`. */
export async function findFires(q: Queryable, path: string, name: string, keys: readonly string[]): Promise<FireRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query<FireRow>(
    `SELECT fire_key, outcome, execution_id::float8 AS execution_id, scheduled_time, error FROM core.trigger_fire
      WHERE path = $1 AND name = $2 AND fire_key = ANY($3::text[])`,
    [path, name, keys],
  );
  return rows;
}

/** Executions among the trigger's latest `recent` starts that have not finished (running, queued or paused). */
export async function unfinishedRunsOf(q: Queryable, path: string, name: string, recent: number): Promise<number[]> {
  const { rows } = await q.query<{ execution_id: number }>(
    `SELECT f.execution_id::float8 AS execution_id
       FROM (SELECT execution_id FROM core.trigger_fire
              WHERE path = $1 AND name = $2 AND outcome = 'started' ORDER BY fired_at DESC LIMIT $3) f
       JOIN core.execution e ON e.execution_id = f.execution_id
      WHERE e.status NOT IN ('completed', 'failed', 'cancelled')`,
    [path, name, recent],
  );
  return rows.map((r) => r.execution_id);
}

/** The fire that started an execution, if a trigger did. */
export async function fireOfExecution(q: Queryable, executionId: number): Promise<{ path: string; name: string; fire_key: string; fired_at: Date } | undefined> {
  const { rows } = await q.query<{ path: string; name: string; fire_key: string; fired_at: Date }>(
    `SELECT path, name, fire_key, fired_at FROM core.trigger_fire WHERE execution_id = $1`,
    [executionId],
  );
  return rows[0];
}

/** A schedule tick moved on by another server (its guard on next_fire_at failed): nothing was written. */
export class TickRaced extends Error {
  constructor() {
    super('another server handled this schedule tick');
  }
}

/** Takes a schedule's row for a tick (FOR UPDATE, in the tick's transaction), or throws TickRaced: another server holds it, or moved it on. */
export async function takeScheduleTick(q: Queryable, trigger: { path: string; name: string }, from: Date): Promise<void> {
  const { rows } = await q.query(`SELECT 1 FROM core.trigger WHERE path = $1 AND name = $2 AND next_fire_at = $3 FOR UPDATE SKIP LOCKED`, [trigger.path, trigger.name, from]);
  if (rows.length === 0) throw new TickRaced();
}

/**
 * Records fires, inside the transaction that starts their executions: a fire recorded already
 * fails the whole transaction (the primary key: `trigger_fire_pkey`), so no fire starts twice.
 * Counts them on the trigger; with `advance`, moves a schedule's next fire time from `from` to
 * `to`, throwing TickRaced (rolling back) when it no longer is `from`.
 */
export async function recordFires(q: Queryable, trigger: { path: string; name: string }, fires: readonly FireRow[], advance?: { from: Date; to: Date | null }): Promise<void> {
  const { rows } = await q.query<{ moved: boolean | null }>(
    `WITH ins AS (
       INSERT INTO core.trigger_fire (path, name, fire_key, outcome, execution_id, scheduled_time, error)
       SELECT $1, $2, x.fire_key, x.outcome, x.execution_id, x.scheduled_time, x.error
         FROM jsonb_to_recordset($3::jsonb) AS x(fire_key text, outcome text, execution_id bigint, scheduled_time timestamptz, error text)
       RETURNING outcome, error
     ), counted AS (
       SELECT count(*) FILTER (WHERE outcome = 'started') AS started, count(*) FILTER (WHERE outcome = 'skipped') AS skipped,
              count(*) FILTER (WHERE outcome = 'refused') AS refused, (array_agg(error) FILTER (WHERE outcome = 'refused'))[1] AS error
         FROM ins
     )
     UPDATE core.trigger t SET fires = t.fires + c.started, skipped = t.skipped + c.skipped, errors = t.errors + c.refused,
            last_error = COALESCE(c.error, t.last_error),
            next_fire_at = CASE WHEN $4::boolean THEN $6::timestamptz ELSE t.next_fire_at END
       FROM counted c
      WHERE t.path = $1 AND t.name = $2 AND (NOT $4::boolean OR t.next_fire_at = $5::timestamptz)
     RETURNING true AS moved`,
    [trigger.path, trigger.name, JSON.stringify(fires), advance !== undefined, advance?.from ?? null, advance?.to ?? null],
  );
  if (advance && rows.length === 0) throw new TickRaced();
}
