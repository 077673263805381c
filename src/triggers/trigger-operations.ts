import type { EngineDeps } from '../../actors/engine-deps.ts';
import { getTrigger, listTriggers, lockTrigger, setTriggerPaused, type TriggerKindName, type TriggerListRow, type TriggerRow } from '../db/trigger.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import { firesBetween, nextFire } from './cron-schedule.ts';
import { fireTrigger, renderTriggerPayload, TriggerChanged, type Fire, type FireResult } from './fire-trigger.ts';
import { countSkipped, recordPausedQueue } from './scheduler.ts';
import { storedSchedule } from './stored-schedule.ts';
import type { ScheduleTrigger } from './trigger.schema.ts';
import { databaseNow } from '../waits/wait-clock.ts';

/** Next fire times a listing shows per schedule. */
const LISTED_NEXT_FIRES = 3;
/** Fires one backfill may start (DESIGN.md "Triggers"). */
export const MAX_BACKFILL_FIRES = 1000;

/** A trigger as the API answers it (GET /api/triggers). */
export type TriggerView = {
  path: string;
  name: string;
  kind: TriggerKindName;
  state: 'active' | 'paused';
  catalog_id: number;
  description: string | null;
  next_fires: string[];
  last_fire: { fire_key: string; execution_id: number | null; at: string; outcome: string } | null;
  fires: number;
  skipped: number;
  errors: number;
  last_error: string | null;
  /** A NATS trigger that is not consuming: why, as a server last found it, and since when (null while it consumes; always for other kinds). */
  subscription_problem: { message: string; since: string } | null;
  spec: Record<string, unknown>;
};

/**
 * Now on PostgreSQL's clock, as the timekeeper last read it: the scheduler counts due times by it
 * (scheduler.ts), so "after now" and "next time after now" must too. On a server 30 s ahead, a
 * backfill or a fire key 20 s ahead was taken for past (started early, its schedule's own fire then
 * a duplicate), and a resume put the next fire 30 s late.
 */
export function scheduleNow(deps: Pick<EngineDeps, 'waitClock'>): Date {
  return new Date(databaseNow(deps));
}

/** Every live trigger, with the next fire times of schedules (none for paused ones) and the last fire. */
export async function triggerViews(deps: EngineDeps, kind?: TriggerKindName): Promise<TriggerView[]> {
  return (await listTriggers(deps.db, kind)).map((row) => viewOf(row));
}

function viewOf(row: TriggerRow & Partial<TriggerListRow>): TriggerView {
  return {
    path: row.path,
    name: row.name,
    kind: row.kind,
    state: row.paused ? 'paused' : 'active',
    catalog_id: Number(row.catalog_id),
    description: typeof row.spec.description === 'string' ? row.spec.description : null,
    next_fires: nextFires(row),
    last_fire: row.last_fire_key ? { fire_key: row.last_fire_key, execution_id: row.last_execution_id ?? null, at: row.last_fired_at!.toISOString(), outcome: row.last_outcome! } : null,
    fires: row.fires,
    skipped: row.skipped,
    errors: row.errors,
    last_error: row.last_error,
    subscription_problem: row.subscription_problem && row.subscription_problem_at ? { message: row.subscription_problem, since: row.subscription_problem_at.toISOString() } : null,
    spec: row.spec,
  };
}

function nextFires(row: TriggerRow): string[] {
  if (row.kind !== 'schedule' || row.paused || !row.next_fire_at) return [];
  const read = storedSchedule(row.spec);
  // Unreadable (registered under older rules): listed, with its stored next fire only.
  if ('problem' in read) return [row.next_fire_at.toISOString()];
  const spec = read.spec;
  const out = [row.next_fire_at];
  while (out.length < LISTED_NEXT_FIRES) {
    const t = nextFire(spec.cron, spec.timezone, out[out.length - 1]);
    if (!t) break;
    out.push(t);
  }
  return out.map((t) => t.toISOString());
}

/** A schedule's stored spec, or 409 saying it no longer reads (registered under older rules): never a 500. */
function scheduleOf(row: TriggerRow): ScheduleTrigger {
  const read = storedSchedule(row.spec);
  if ('problem' in read) throw new ServiceError('conflict', { message: `trigger ${row.name} of ${row.path}: ${read.problem}` });
  return read.spec;
}

async function triggerOr404(deps: EngineDeps, path: string, name: string): Promise<TriggerRow> {
  const row = await getTrigger(deps.db, path, name);
  if (!row) throw notFound(`trigger ${name} of ${path}`);
  return row;
}

/**
 * Pauses or resumes a trigger at `now` (a resumed schedule fires next at its next time after now;
 * a paused queue schedule records the times it held as skipped); 404 when unknown.
 */
export async function pauseTrigger(deps: EngineDeps, path: string, name: string, paused: boolean, now: Date = scheduleNow(deps)): Promise<TriggerView> {
  let skipped = 0;
  const updated = await deps.db.tx(async (q) => {
    // Read under its lock: a resumed schedule's next fire is of the cron it is written beside (a
    // registration that changes it waits for this commit, or committed before this read).
    const row = await lockTrigger(q, path, name);
    if (!row) return undefined;
    // Only a resume reads the spec (its next fire): a schedule that no longer reads can still be paused.
    const spec = row.kind === 'schedule' && !paused ? scheduleOf(row) : undefined;
    const set = await setTriggerPaused(q, path, name, paused, spec ? nextFire(spec.cron, spec.timezone, now) : null);
    // The row as locked above is its state before: a pause of a running queue schedule records what it holds.
    if (set && paused && !row.paused && set.kind === 'schedule') skipped = await recordPausedQueue(q, set, now, deps.config);
    return set;
  });
  countSkipped(deps, skipped);
  if (!updated) throw notFound(`trigger ${name} of ${path}`);
  // Answered as the listing shows it: the updated row alone has no last fire (it read as null).
  const [listed] = await listTriggers(deps.db, undefined, { path, name });
  return viewOf(listed ?? updated);
}

/**
 * Fires a trigger by hand, now: a schedule renders its own payload (scheduled_time now), the
 * given `payload` merges over it; `fireKey` (default: a new one) makes a repeat start nothing.
 */
export async function fireByHand(deps: EngineDeps, path: string, name: string, body: { payload?: Record<string, unknown>; fireKey?: string }, rereads = MAX_REREADS) {
  const row = await triggerOr404(deps, path, name);
  const now = scheduleNow(deps);
  if (row.kind === 'schedule' && body.fireKey !== undefined) refuseComingTime(scheduleOf(row), body.fireKey, now);
  const fireKey = body.fireKey ?? `manual:${crypto.randomUUID()}`;
  const own = row.kind === 'schedule' ? renderTriggerPayload(scheduleOf(row).payload, { trigger: { name, kind: row.kind, scheduled_time: now.toISOString(), fired_at: now.toISOString() } }) : { payload: {} };
  const fire: Fire = 'refused' in own ? { fireKey, scheduledTime: now, refused: own.refused } : { fireKey, scheduledTime: row.kind === 'schedule' ? now : null, payload: { ...own.payload, ...body.payload } };
  // Present when recorded: a new version that removed the trigger meanwhile would otherwise run
  // its own workflow with this payload; and, for a schedule, whose payload is rendered here from
  // the version read above, still of that version (else it is read again).
  let result: FireResult;
  try {
    [result] = await fireTrigger(deps, { path, name, kind: row.kind }, [fire], { live: 'present', ...(row.kind === 'schedule' ? { catalogId: row.catalog_id } : {}) });
  } catch (err) {
    if (!(err instanceof TriggerChanged)) throw err;
    if (rereads > 0) return fireByHand(deps, path, name, body, rereads - 1);
    throw keptChanging(path, name, 'fired');
  }
  // As a webhook's delivery answers it: the fire is recorded, so the same fire_key answers the same.
  if (result.outcome === 'refused') {
    throw new ServiceError('fire_refused', { code: 'fire_refused', message: `trigger ${name} of ${path} started nothing: ${result.error}`, errors: [`payload: ${result.error}`], fire_key: result.fireKey, duplicate: result.duplicate });
  }
  return { execution_id: result.executionId, duplicate: result.duplicate, fire_key: result.fireKey, outcome: result.outcome, debounced: result.debounced === true };
}

/**
 * 422 naming fire_key when it is a time the schedule fires after `now` (a schedule's keys are its
 * times, ISO 8601 UTC): started now, that time's own fire would start nothing (as backfill refuses
 * times after now).
 */
function refuseComingTime(spec: ScheduleTrigger, fireKey: string, now: Date): void {
  const at = Date.parse(fireKey);
  if (Number.isNaN(at) || at <= now.getTime() || new Date(at).toISOString() !== fireKey) return;
  if (nextFire(spec.cron, spec.timezone, new Date(at - 1))?.getTime() !== at) return;
  throw new ServiceError('unprocessable', {
    message: 'invalid body',
    errors: [`fire_key: ${fireKey} is a time this schedule fires after now (${now.toISOString()}): that fire would then start nothing; give a key of your own`],
  });
}

/** What a backfill did: the executions it started, the times made before (`skipped`), and its own fires that started nothing, with why. */
export type Backfilled = { execution_ids: number[]; skipped: number; refused: { fire_key: string; error: string }[] };

/**
 * Starts a schedule's fires of `[from, to)` (each keyed by its scheduled time, so a range again,
 * or times the schedule fired itself, start nothing new; a time it recorded as skipped, which
 * never started, starts now). Overlap does not apply: asked for.
 */
export async function backfill(deps: EngineDeps, path: string, name: string, from: Date, to: Date): Promise<Backfilled> {
  // This backfill's own fires, by key, kept when a new version makes it read the schedule again:
  // those are made (with the version they were made under), the rest are made as of the new one.
  const made = new Map<string, FireResult>();
  let before: FireResult[] = [];
  for (let rereads = MAX_REREADS; ; rereads--) {
    const row = await triggerOr404(deps, path, name);
    if (row.kind !== 'schedule') throw new ServiceError('unprocessable', { message: `trigger ${name} of ${path} is a ${row.kind} trigger: only schedules backfill`, errors: ['name: not a schedule'] });
    if (!(from.getTime() < to.getTime())) throw new ServiceError('unprocessable', { message: 'from must be before to', errors: ['to: must be after from'] });
    const spec = scheduleOf(row);
    const times = firesBetween(spec.cron, spec.timezone, from, to, MAX_BACKFILL_FIRES + 1);
    if (times.length > MAX_BACKFILL_FIRES) throw new ServiceError('unprocessable', { message: `the range holds more than ${MAX_BACKFILL_FIRES} fires: backfill a shorter one`, errors: [`to: at most ${MAX_BACKFILL_FIRES} fires per backfill`] });
    const firedAt = scheduleNow(deps).toISOString();
    const fires = times
      .filter((t) => !made.has(t.toISOString()))
      .map((t): Fire => ({ fireKey: t.toISOString(), scheduledTime: t, ...renderTriggerPayload(spec.payload, { trigger: { name, kind: 'schedule', scheduled_time: t.toISOString(), fired_at: firedAt } }) }));
    before = [];
    try {
      // A start is one statement: chunks keep one backfill from writing a thousand executions at once.
      for (let i = 0; i < fires.length; i += BACKFILL_CHUNK) {
        const results = await fireTrigger(deps, { path, name, kind: 'schedule' }, fires.slice(i, i + BACKFILL_CHUNK), { readFirst: true, refill: true, live: 'present', catalogId: row.catalog_id });
        for (const r of results) {
          if (r.duplicate) before.push(r);
          else made.set(r.fireKey, r);
        }
      }
      break;
    } catch (err) {
      // Its payload (or its times) changed while it was made: the rest are made as of the new version.
      if (!(err instanceof TriggerChanged)) throw err;
      if (rereads === 0) throw keptChanging(path, name, 'backfilled');
    }
  }
  const fresh = [...made.values()];
  return {
    execution_ids: fresh.filter((r) => r.outcome === 'started').map((r) => r.executionId!),
    skipped: before.length,
    // Refused by the payload or the inputs: said, not counted among the times made before.
    refused: fresh.filter((r) => r.outcome !== 'started').map((r) => ({ fire_key: r.fireKey, error: r.error ?? r.outcome })),
  };
}

const BACKFILL_CHUNK = 100;
/** Times a fire by hand or a backfill reads its schedule again after a new version changed it while it fired. */
const MAX_REREADS = 3;

/** 409: a new version changed the trigger at every read of a fire by hand or a backfill. */
function keptChanging(path: string, name: string, what: string): ServiceError {
  return new ServiceError('conflict', { code: 'conflict', message: `trigger ${name} of ${path} kept changing while it ${what}: send it again` });
}
