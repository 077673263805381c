import { EVENT } from '../../machines/event-types.ts';
import type { Queryable } from './queryable.ts';
import { LIVE_EXECUTION_SQL } from './sql-list.ts';

// The one writer of core.trigger and core.trigger_fire (migrations/0015_triggers.sql); retention
// deletes old fires with the rest of an expired range (partition.repo.ts).

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
  /** Why a NATS trigger is not consuming, as a server last found it (null while it consumes), and since when. */
  subscription_problem: string | null;
  subscription_problem_at: Date | null;
};

export type TriggerListRow = TriggerRow & { last_fire_key: string | null; last_execution_id: number | null; last_fired_at: Date | null; last_outcome: string | null };

export type FireOutcome = 'started' | 'skipped' | 'refused';

/** A fire as recorded: what it started (`execution_id`), or why it started nothing (`error`). */
export type FireRow = { fire_key: string; outcome: FireOutcome; execution_id: number | null; scheduled_time: Date | null; error: string | null };

const COLUMNS = `path, name, catalog_id, kind, spec, paused, next_fire_at, fires::float8 AS fires, skipped::float8 AS skipped, errors::float8 AS errors, last_error, subscription_problem, subscription_problem_at`;

/**
 * Makes `triggers` the live ones of `path` (call in the registration's transaction): each is
 * inserted or updated (a schedule keeps its next fire time unless its cron or timezone changed;
 * a pause is kept; one of another kind or stream is live from now), those the version no longer declares are removed, and every server hears of it.
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
         -- A NATS consumer delivers from created_at: a trigger that becomes a NATS trigger, or moves
         -- to another stream, consumes from now on, not what that stream held since the name was first declared.
         created_at = CASE WHEN core.trigger.kind IS DISTINCT FROM EXCLUDED.kind
                             OR core.trigger.spec->>'stream' IS DISTINCT FROM EXCLUDED.spec->>'stream'
                           THEN now() ELSE core.trigger.created_at END,
         -- Why a NATS trigger is not consuming says nothing of a trigger of another kind.
         subscription_problem = CASE WHEN EXCLUDED.kind = 'nats' THEN core.trigger.subscription_problem END,
         subscription_problem_at = CASE WHEN EXCLUDED.kind = 'nats' THEN core.trigger.subscription_problem_at END,
         next_fire_at = CASE WHEN core.trigger.kind = EXCLUDED.kind AND core.trigger.next_fire_at IS NOT NULL
                              AND core.trigger.spec->>'cron' IS NOT DISTINCT FROM EXCLUDED.spec->>'cron'
                              AND core.trigger.spec->>'timezone' IS NOT DISTINCT FROM EXCLUDED.spec->>'timezone'
                             THEN core.trigger.next_fire_at ELSE EXCLUDED.next_fire_at END
     )
     SELECT pg_notify('${TRIGGERS_CHANGED_CHANNEL}', $1)`,
    [entry.path, entry.catalogId, entry.triggers.map((t) => t.name), JSON.stringify(entry.triggers.map((t) => ({ name: t.name, kind: t.kind, spec: t.spec, first_fire: t.firstFire })))],
  );
}

/** Every live trigger with its last fire, ordered by path and name; optionally of one kind, or only the trigger `one`. */
export async function listTriggers(q: Queryable, kind?: TriggerKindName, one?: { path: string; name: string }): Promise<TriggerListRow[]> {
  const { rows } = await q.query<TriggerListRow>(
    `SELECT ${COLUMNS.split(', ').map((c) => `t.${c}`).join(', ')},
            f.fire_key AS last_fire_key, f.execution_id AS last_execution_id, f.fired_at AS last_fired_at, f.outcome AS last_outcome
       FROM core.trigger t
       LEFT JOIN LATERAL (SELECT fire_key, execution_id, fired_at, outcome FROM core.trigger_fire
                           WHERE path = t.path AND name = t.name ORDER BY fired_at DESC LIMIT 1) f ON true
      WHERE ($1::text IS NULL OR t.kind = $1) AND ($2::text IS NULL OR (t.path = $2 AND t.name = $3))
      ORDER BY t.path, t.name`,
    [kind ?? null, one?.path ?? null, one?.name ?? null],
  );
  return rows;
}

/** One live trigger; undefined when `path` declares none of that name. */
export async function getTrigger(q: Queryable, path: string, name: string): Promise<TriggerRow | undefined> {
  const { rows } = await q.query<TriggerRow>(`SELECT ${COLUMNS} FROM core.trigger WHERE path = $1 AND name = $2`, [path, name]);
  return rows[0];
}

/** The trigger of `path` and `name`, locked till the caller's commit (a registration that would change it waits); undefined when there is none. */
export async function lockTrigger(q: Queryable, path: string, name: string): Promise<TriggerRow | undefined> {
  const { rows } = await q.query<TriggerRow>(`SELECT ${COLUMNS} FROM core.trigger WHERE path = $1 AND name = $2 FOR UPDATE`, [path, name]);
  return rows[0];
}

/** Locks and reads `path`'s schedules (call in a registration's transaction, before syncTriggers). */
export async function lockSchedules(q: Queryable, path: string): Promise<TriggerRow[]> {
  const { rows } = await q.query<TriggerRow>(`SELECT ${COLUMNS} FROM core.trigger WHERE path = $1 AND kind = 'schedule' ORDER BY name FOR UPDATE`, [path]);
  return rows;
}

/**
 * Pauses or resumes a trigger whose row the caller locked and read in its transaction (lockTrigger);
 * a resumed schedule starts again from `nextFire` (what was due while it was paused is not caught
 * up). Undefined when there is no such trigger. Every server hears of it.
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

/** The scheduler's look: the schedules due, and the earliest next fire after them (null: none). */
export type SchedulesLook = { due: TriggerRow[]; next: Date | null };

/**
 * Schedules due at `now` (not paused), earliest first, at most `limit`, but those `passOver` (a
 * look of the same round found them waiting for their runs); and in the same statement the
 * earliest next fire of any active schedule after `now`, to sleep until when none is due.
 */
export async function lookAtSchedules(q: Queryable, now: Date, limit: number, passOver: readonly { path: string; name: string }[] = []): Promise<SchedulesLook> {
  // One row at least (the next fire), with a due schedule or NULLs beside it.
  const { rows } = await q.query<{ next_at: Date | null } & (TriggerRow | { [K in keyof TriggerRow]: null })>({
    name: 'svc_look_at_schedules',
    text: `SELECT n.next_at, d.*
             FROM (SELECT min(next_fire_at) AS next_at FROM core.trigger WHERE kind = 'schedule' AND NOT paused AND next_fire_at > $1) n
             LEFT JOIN LATERAL (
               SELECT ${COLUMNS} FROM core.trigger t
                WHERE kind = 'schedule' AND NOT paused AND next_fire_at <= $1
                  AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS w(path, name) WHERE w.path = t.path AND w.name = t.name)
                ORDER BY next_fire_at LIMIT $2) d ON true
            ORDER BY d.next_fire_at`,
    values: [now, limit, passOver.map((w) => w.path), passOver.map((w) => w.name)],
  });
  const due = rows.flatMap(({ next_at: _, ...row }) => (row.path === null ? [] : [row]));
  return { due, next: rows[0]?.next_at ?? null };
}

/** The earliest next fire of any active schedule but those `waiting` (null: none), so a scheduler sleeps until then. */
export async function earliestScheduledFire(q: Queryable, waiting: readonly { path: string; name: string }[] = []): Promise<Date | null> {
  const { rows } = await q.query<{ at: Date | null }>(
    `SELECT min(next_fire_at) AS at FROM core.trigger t
      WHERE kind = 'schedule' AND NOT paused
        AND NOT EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) AS w(path, name) WHERE w.path = t.path AND w.name = t.name)`,
    [waiting.map((w) => w.path), waiting.map((w) => w.name)],
  );
  return rows[0]?.at ?? null;
}

/** The recorded fires among `keys` (of any triggers). */
export async function findFires(q: Queryable, keys: readonly { path: string; name: string; fireKey: string }[]): Promise<TriggerFireRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query<TriggerFireRow>(
    `SELECT f.path, f.name, f.fire_key, f.outcome, f.execution_id::float8 AS execution_id, f.scheduled_time, f.error
       FROM unnest($1::text[], $2::text[], $3::text[]) AS x(path, name, fire_key)
       JOIN core.trigger_fire f ON f.path = x.path AND f.name = x.name AND f.fire_key = x.fire_key`,
    [keys.map((k) => k.path), keys.map((k) => k.name), keys.map((k) => k.fireKey)],
  );
  return rows;
}

/**
 * Per trigger (`path\nname`), every execution it started that has not finished (queued, running
 * or paused), however many of its fires came after (overlap skip, queue and cancel_previous), and
 * the successor auto-resume started for such a run after a crash (`resumed_from`: the same run
 * restarted, so still the trigger's run; before, the next due time started beside it), and a run
 * auto-resume cancelled to restart whose successor has not started yet (within
 * `resumeWindowMinutes`, while successorlessResumes would still start it): read in the same
 * statement as the live ones, so a tick between the cancel and the start no longer starts a run.
 * Read from the live executions of the triggers' paths (execution_live_idx: an execution leaves it
 * when it ends), each joined to the fire that started it (trigger_fire_execution_idx): the cost
 * follows the executions alive, not the fires a trigger ever made. Live roots no fire started
 * (started by hand, or successors) have their start read (resumedRuns), one key lookup each: about
 * the cost of their fire lookup again, and nothing for a path whose live runs a trigger started.
 */
export async function unfinishedRuns(q: Queryable, triggers: readonly { path: string; name: string }[], resumeWindowMinutes: number): Promise<Map<string, number[]>> {
  const { rows } = await q.query<{ path: string | null; name: string | null; execution_id: number; root: boolean }>({
    name: 'svc_unfinished_trigger_runs_or_restarting',
    // The restarting ones by event_auto_resume_cancel_idx and event_resumed_from_idx (migrations/0052).
    text: `SELECT f.path, f.name, e.execution_id::float8 AS execution_id, e.parent_execution_id IS NULL AS root
             FROM core.execution e
             LEFT JOIN core.trigger_fire f ON f.execution_id = e.execution_id
            WHERE e.status IN ${LIVE_EXECUTION_SQL} AND e.path = ANY($1::text[])
           UNION ALL
           SELECT f.path, f.name, e.execution_id::float8, true
             FROM core.event v
             JOIN core.execution e ON e.execution_id = v.execution_id
             LEFT JOIN core.trigger_fire f ON f.execution_id = e.execution_id
            WHERE v.event_type = '${EVENT.executionCancelled}' AND v.context->>'reason' = 'auto_resume'
              AND v.created_at >= now() - make_interval(mins => $2) AND v.context->>'successor' = 'true'
              AND e.path = ANY($1::text[])
              AND NOT EXISTS (SELECT 1 FROM core.event s WHERE s.event_type = '${EVENT.executionStarted}' AND s.context ? 'resumed_from'
                                 AND s.context->>'resumed_from' = v.execution_id::text)
            ORDER BY execution_id`,
    values: [[...new Set(triggers.map((t) => t.path))], resumeWindowMinutes],
  });
  const wanted = new Set(triggers.map((t) => `${t.path}\n${t.name}`));
  // A set per trigger: a debounced run is the execution of several fires.
  const runs = new Map<string, Set<number>>();
  const add = (key: string, id: number) => {
    if (wanted.has(key)) runs.set(key, (runs.get(key) ?? new Set()).add(id));
  };
  for (const r of rows) if (r.path !== null) add(`${r.path}\n${r.name}`, r.execution_id);
  // Auto-resume restarts roots only: a child no fire started is its parent's.
  const unfired = rows.filter((r) => r.path === null && r.root).map((r) => r.execution_id);
  if (unfired.length) for (const [id, fires] of await resumedRuns(q, unfired)) for (const f of fires) add(`${f.path}\n${f.name}`, id);
  return new Map([...runs].map(([key, ids]) => [key, [...ids].sort((a, b) => a - b)]));
}

/**
 * Each execution's status (queued, running, paused...), by id: a skip's reason names the status of
 * the run it waited for, which unfinishedRuns does not read (a tick with no unfinished run asks nothing).
 */
export async function runStatuses(q: Queryable, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await q.query<{ execution_id: number; status: string }>({
    name: 'svc_trigger_run_statuses',
    // An unfinished run that has ended is one auto-resume cancelled to start again (unfinishedRuns).
    text: `SELECT execution_id::float8 AS execution_id, CASE WHEN status IN ${LIVE_EXECUTION_SQL} THEN status ELSE 'restarting' END AS status
             FROM core.execution WHERE execution_id = ANY($1::bigint[])`,
    values: [[...new Set(ids)]],
  });
  return new Map(rows.map((r) => [r.execution_id, r.status]));
}

/** Successors resumed from successors are followed this far back (each crash of a run adds one). */
const MAX_RESUMES_FOLLOWED = 32;

/**
 * Of live executions no fire started: those auto-resume started (`resumed_from` in their
 * `execution.started`, followed back through successors of successors), with the fires that
 * started the first of their line.
 */
async function resumedRuns(q: Queryable, ids: readonly number[]): Promise<Map<number, { path: string; name: string }[]>> {
  const out = new Map<number, { path: string; name: string }[]>();
  // The execution each line has reached, back from the live one it began at.
  let line = new Map<number, number>(ids.map((id) => [id, id]));
  for (let step = 0; step < MAX_RESUMES_FOLLOWED && line.size > 0; step++) {
    const { rows } = await q.query<{ execution_id: number; resumed_from: number }>(
      `SELECT execution_id::float8 AS execution_id, (context->>'resumed_from')::float8 AS resumed_from
         FROM core.event WHERE execution_id = ANY($1::bigint[]) AND event_id = 1 AND context ? 'resumed_from'`,
      [[...new Set(line.values())]],
    );
    const from = new Map(rows.map((r) => [r.execution_id, r.resumed_from]));
    const next = new Map<number, number>();
    for (const [live, at] of line) {
      const earlier = from.get(at);
      if (earlier !== undefined) next.set(live, earlier);
    }
    if (next.size === 0) break;
    const { rows: fires } = await q.query<{ path: string; name: string; execution_id: number }>(
      `SELECT path, name, execution_id::float8 AS execution_id FROM core.trigger_fire WHERE execution_id = ANY($1::bigint[])`,
      [[...new Set(next.values())]],
    );
    line = new Map();
    for (const [live, at] of next) {
      const started = fires.filter((f) => f.execution_id === at);
      if (started.length) out.set(live, started);
      else line.set(live, at);
    }
  }
  return out;
}

/**
 * Takes schedules whose stored spec this version cannot read out of the timekeeper's way (each
 * only while still due at `due`): no next fire (a new version of the playbook computes one), the
 * reason in last_error, counted in errors.
 */
export async function shelveSchedules(q: Queryable, schedules: readonly { path: string; name: string; due: Date; error: string }[]): Promise<void> {
  await q.query(
    `UPDATE core.trigger t SET next_fire_at = NULL, errors = t.errors + 1, last_error = x.error, updated_at = now()
       FROM jsonb_to_recordset($1::jsonb) AS x(path text, name text, due timestamptz, error text)
      WHERE t.path = x.path AND t.name = x.name AND t.next_fire_at = x.due`,
    [JSON.stringify(schedules)],
  );
}

// The execution auto-resume started in place of `id` (a column; one at most, its start keyed by
// it), by the index of successors' start events: null when there is none.
const SUCCESSOR_OF = (id: string) =>
  `SELECT s.execution_id FROM core.event s WHERE s.event_type = '${EVENT.executionStarted}' AND s.context ? 'resumed_from' AND s.context->>'resumed_from' = ${id}::text LIMIT 1`;

/**
 * Per schedule (`path\nname`), until when its due times from `before` on waited for a run of it
 * (overlap queue), for a schedule none of whose runs is unfinished: the time its last run before
 * `before` started (the tick that started it saw the times due then), or the latest end of that run
 * and of every run of the trigger fired since, if later. Absent: no run started before `before`.
 * Its last run is the started fire with the greatest key (a scheduled time) before `before`, read
 * backwards on the fires' primary key; the runs since on trigger_fire_recent_idx, each execution by
 * its key (a few rows: the generic plan cannot know how few, so it is not left a join to choose).
 * A run auto-resume restarted ends when its last successor does (`resumed_from`, followed on
 * event_resumed_from_idx, migrations/0052): its own end is only the restart's cancel.
 */
export async function queuedThrough(q: Queryable, schedules: readonly { path: string; name: string; before: Date }[]): Promise<Map<string, Date>> {
  const { rows } = await q.query<{ path: string; name: string; until: Date }>({
    name: 'svc_schedule_queued_through',
    text: `SELECT x.path, x.name, greatest(r.fired_at, l.ended) AS until
             FROM unnest($1::text[], $2::text[], $3::text[]) AS x(path, name, before)
            CROSS JOIN LATERAL (SELECT fired_at FROM core.trigger_fire
                                 WHERE path = x.path AND name = x.name AND fire_key < x.before AND outcome = 'started'
                                 ORDER BY fire_key DESC LIMIT 1) r
            CROSS JOIN LATERAL (SELECT max(greatest((SELECT e.finished_at FROM core.execution e WHERE e.execution_id = f.execution_id),
                                                    (WITH RECURSIVE chain(id) AS (SELECT (${SUCCESSOR_OF('f.execution_id')})
                                                                                   UNION ALL
                                                                                  SELECT (${SUCCESSOR_OF('chain.id')}) FROM chain WHERE chain.id IS NOT NULL)
                                                     SELECT max((SELECT e.finished_at FROM core.execution e WHERE e.execution_id = chain.id)) FROM chain))) AS ended
                                  FROM core.trigger_fire f
                                 WHERE f.path = x.path AND f.name = x.name AND f.fired_at >= r.fired_at AND f.outcome = 'started') l`,
    values: [schedules.map((s) => s.path), schedules.map((s) => s.name), schedules.map((s) => s.before.toISOString())],
  });
  return new Map(rows.map((r) => [`${r.path}\n${r.name}`, r.until]));
}

/** The fire that started an execution, if a trigger did. */
export async function fireOfExecution(q: Queryable, executionId: number): Promise<{ path: string; name: string; fire_key: string; fired_at: Date } | undefined> {
  const { rows } = await q.query<{ path: string; name: string; fire_key: string; fired_at: Date }>(
    `SELECT path, name, fire_key, fired_at FROM core.trigger_fire WHERE execution_id = $1`,
    [executionId],
  );
  return rows[0];
}

/**
 * A trigger's fire as recorded beside its trigger's name; `refill`: a backfill's fire of a time
 * recorded as skipped (overlap, a paused queue), which replaces that record only while it still
 * says skipped (recordFires).
 */
export type TriggerFireRow = FireRow & { path: string; name: string; refill?: boolean };
/** A schedule's next fire time moving from `from` to `to` in a tick; `catalogId`: of the version the tick read (taken only while still that one). */
export type TickAdvance = { path: string; name: string; from: Date; to: Date | null; catalogId?: number };

/**
 * Takes the schedules' rows for a tick (FOR UPDATE SKIP LOCKED, in the tick's transaction): those
 * still due at the time the tick read, not paused, and of the version it read (its `catalogId`: a new version
 * registered since may have changed the payload the tick rendered); a row another server holds, or moved on, is not taken.
 * Answers the taken ones as `path\nname` keys.
 */
export async function takeScheduleTicks(q: Queryable, ticks: readonly TickAdvance[]): Promise<Set<string>> {
  const { rows } = await q.query<{ path: string; name: string }>(
    `SELECT t.path, t.name FROM core.trigger t
       JOIN unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[]) AS x(path, name, due, catalog_id)
         ON t.path = x.path AND t.name = x.name AND t.next_fire_at = x.due AND (x.catalog_id IS NULL OR t.catalog_id = x.catalog_id)
      -- Paused since the tick looked: it fires nothing (the pause answered before this fire).
      WHERE NOT t.paused
      FOR UPDATE OF t SKIP LOCKED`,
    [ticks.map((t) => t.path), ticks.map((t) => t.name), ticks.map((t) => t.from), ticks.map((t) => t.catalogId ?? null)],
  );
  return new Set(rows.map((r) => `${r.path}\n${r.name}`));
}

/**
 * Records fires, inside the transaction that starts their executions: a fire recorded already
 * fails the whole transaction (the primary key: `trigger_fire_pkey`), so no fire starts twice; a
 * `refill` replaces a fire recorded as skipped, and fails the same way when that record no longer
 * says skipped (another backfill refilled it first). Counts them on their triggers (a refilled
 * time is no longer counted skipped), and moves schedules' next fire times (`advances`; their rows
 * were taken by takeScheduleTicks in this transaction). Answers each trigger it counted on, by
 * `path\nname`, as the update found it (locked now till commit): its kind, whether it is paused, its version.
 */
export async function recordFires(q: Queryable, fires: readonly TriggerFireRow[], advances: readonly TickAdvance[]): Promise<Map<string, { kind: TriggerKindName; paused: boolean; catalog_id: number }>> {
  // Prepared: every fire's transaction sends it, and its plan cost more than its run.
  const { rows } = await q.query<{ path: string | null; name: string; kind: TriggerKindName; paused: boolean; catalog_id: number; refilled: number }>({
    name: 'svc_record_fires',
    text: `WITH x AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(path text, name text, fire_key text, outcome text, execution_id bigint, scheduled_time timestamptz, error text, refill boolean)
     ), ins AS (
       -- fired_at: the clock at the insert, the transaction's last statement but its commit (now() is its start).
       INSERT INTO core.trigger_fire (path, name, fire_key, outcome, execution_id, scheduled_time, error, fired_at)
       SELECT x.path, x.name, x.fire_key, x.outcome, x.execution_id, x.scheduled_time, x.error, clock_timestamp()
         FROM x WHERE x.refill IS NOT TRUE
       RETURNING path, name, outcome, error
     ), ref AS (
       -- Only while still skipped: a row refilled by a transaction that committed first is re-read here (and not matched).
       UPDATE core.trigger_fire f SET outcome = x.outcome, execution_id = x.execution_id, error = x.error, fired_at = clock_timestamp()
         FROM x WHERE x.refill AND f.path = x.path AND f.name = x.name AND f.fire_key = x.fire_key AND f.outcome = 'skipped'
       RETURNING f.path, f.name, f.outcome, f.error
     ), counted AS (
       SELECT path, name, count(*) FILTER (WHERE outcome = 'started') AS started,
              count(*) FILTER (WHERE outcome = 'skipped' AND NOT refilled) - count(*) FILTER (WHERE refilled) AS skipped,
              count(*) FILTER (WHERE outcome = 'refused') AS refused, (array_agg(error) FILTER (WHERE outcome = 'refused'))[1] AS error
         FROM (SELECT *, false AS refilled FROM ins UNION ALL SELECT *, true FROM ref) r GROUP BY path, name
     ), adv AS (
       SELECT * FROM jsonb_to_recordset($2::jsonb) AS a(path text, name text, "to" timestamptz)
     ), upd AS (
     UPDATE core.trigger t SET fires = t.fires + COALESCE(c.started, 0), skipped = t.skipped + COALESCE(c.skipped, 0),
            errors = t.errors + COALESCE(c.refused, 0), last_error = COALESCE(c.error, t.last_error),
            next_fire_at = CASE WHEN a.path IS NOT NULL THEN a."to" ELSE t.next_fire_at END
       FROM (SELECT path, name FROM counted UNION SELECT path, name FROM adv) k
       LEFT JOIN counted c ON c.path = k.path AND c.name = k.name
       LEFT JOIN adv a ON a.path = k.path AND a.name = k.name
      WHERE t.path = k.path AND t.name = k.name
     RETURNING t.path, t.name, t.kind, t.paused, t.catalog_id::float8 AS catalog_id
     )
     -- One row at least: how many refills matched, with no trigger counted on too (one removed meanwhile).
     SELECT u.*, (SELECT count(*) FROM ref)::int AS refilled FROM (SELECT 1) one LEFT JOIN upd u ON true`,
    values: [JSON.stringify(fires), JSON.stringify(advances.map((a) => ({ path: a.path, name: a.name, to: a.to })))],
  });
  const refills = fires.filter((f) => f.refill).length;
  if (refills > 0 && (rows[0]?.refilled ?? 0) < refills) {
    // As a fire key another writer recorded first: the caller reads what it did (fire-trigger.ts).
    throw Object.assign(new Error('a skipped fire was refilled by another transaction first'), { code: '23505', constraint: 'trigger_fire_pkey' });
  }
  return new Map(rows.flatMap((r) => (r.path === null ? [] : [[`${r.path}\n${r.name}`, { kind: r.kind, paused: r.paused, catalog_id: r.catalog_id }] as const])));
}

/**
 * Notes why a NATS trigger is not consuming (`problem`), or that it consumes (null); a row that
 * says so already is not written (its `since` stays the first time it was found), nor one a new
 * version made another kind (a server still subscribed to it may note late).
 */
export async function noteSubscriptionProblem(q: Queryable, trigger: { path: string; name: string }, problem: string | null): Promise<void> {
  await q.query(
    `UPDATE core.trigger SET subscription_problem = $3, subscription_problem_at = CASE WHEN $3::text IS NULL THEN NULL ELSE now() END
      WHERE path = $1 AND name = $2 AND kind = 'nats' AND subscription_problem IS DISTINCT FROM $3::text`,
    [trigger.path, trigger.name, problem],
  );
}
