import type { EngineDeps } from '../../actors/engine-deps.ts';
import { startExecutions, type StartInput } from '../../actors/start-execution.ts';
import { StartPreludeCache } from '../../actors/start-prelude-cache.ts';
import type { Queryable } from '../db/queryable.ts';
import { findFires, recordFires, takeScheduleTick, type FireRow, type TriggerKindName } from '../db/trigger.repo.ts';
import { ServiceError } from '../errors.ts';
import { TemplateError, renderValue } from '../dsl/render.ts';
import { isPlainObject } from '../objects.ts';

export { TickRaced } from '../db/trigger.repo.ts';

/** A trigger as a fire names it. */
export type TriggerRef = { path: string; name: string; kind: TriggerKindName };

/** One fire to make: its key, the payload its templates rendered (or why they could not), or a skip. */
export type Fire = { fireKey: string; scheduledTime: Date | null } & ({ payload: Record<string, unknown> } | { refused: string } | { skipped: string });

/** What came of a fire: the execution it started (now, or the first time when `duplicate`), or none. */
export type FireResult = { fireKey: string; outcome: FireRow['outcome']; executionId: number | null; duplicate: boolean; error: string | null };

const UNIQUE_VIOLATION = '23505';
const FIRE_KEY = 'trigger_fire_pkey';
// Each race lost to another server's fire of the same key removes that key: the next attempt has fewer.
const MAX_ATTEMPTS = 8;

/**
 * Makes `fires` of a trigger exactly once: each fire's row is written in the transaction that
 * starts its execution (actors/start-execution.ts, with `execution.started.context.trigger`), and
 * its key is the row's primary key, so a fire recorded already (by this server or another, before
 * a restart, by a redelivery) answers with what it started then (`duplicate`) and starts nothing.
 * `tick`: a schedule's next fire time moves from `from` to `to` in the same transaction, after
 * taking the trigger's row (TickRaced when another server holds it or moved it on).
 */
export async function fireTrigger(deps: EngineDeps, trigger: TriggerRef, fires: readonly Fire[], tick?: { from: Date; to: Date | null }): Promise<FireResult[]> {
  const results = new Map<string, FireResult>();
  let pending = [...new Map(fires.map((f) => [f.fireKey, f])).values()];
  for (let attempt = 1; ; attempt++) {
    for (const row of await findFires(deps.db, trigger.path, trigger.name, pending.map((f) => f.fireKey))) {
      results.set(row.fire_key, { fireKey: row.fire_key, outcome: row.outcome, executionId: row.execution_id, duplicate: true, error: row.error });
    }
    pending = pending.filter((f) => !results.has(f.fireKey));
    try {
      for (const r of await fireOnce(deps, trigger, pending, tick)) results.set(r.fireKey, r);
      break;
    } catch (err) {
      const e = err as { code?: unknown; constraint?: unknown };
      if (!(e.code === UNIQUE_VIOLATION && e.constraint === FIRE_KEY) || attempt >= MAX_ATTEMPTS) throw err;
      // Another server recorded one of these fires first: read what it did and try the rest again.
    }
  }
  const out = fires.map((f) => results.get(f.fireKey)!);
  for (const r of out) deps.metrics.triggerFires.inc({ kind: trigger.kind, outcome: r.duplicate ? 'duplicate' : r.outcome });
  return out;
}

async function fireOnce(deps: EngineDeps, trigger: TriggerRef, fires: readonly Fire[], tick?: { from: Date; to: Date | null }): Promise<FireResult[]> {
  if (fires.length === 0 && !tick) return [];
  const starting = fires.filter((f): f is Fire & { payload: Record<string, unknown> } => 'payload' in f);
  const unstarted = fires.filter((f) => !('payload' in f)).map((f): FireRow => ({ fire_key: f.fireKey, outcome: 'skipped' in f ? 'skipped' : 'refused', execution_id: null, scheduled_time: f.scheduledTime, error: 'skipped' in f ? f.skipped : 'refused' in f ? f.refused : null }));
  const begin = tick ? (q: Queryable) => takeScheduleTick(q, trigger, tick.from) : undefined;
  let rows: FireRow[] = unstarted;
  if (starting.length === 0) {
    await deps.db.tx(async (q) => {
      await begin?.(q);
      await recordFires(q, trigger, rows, tick);
    });
  } else {
    const inputs: StartInput[] = starting.map((f) => ({ path: trigger.path, payload: f.payload, origin: { trigger: { name: trigger.name, kind: trigger.kind, fire_key: f.fireKey } } }));
    await startExecutions(deps, inputs, new StartPreludeCache(), {
      begin,
      beforeCommit: async (q, started) => {
        rows = [
          ...starting.map((f, i): FireRow => {
            const r = started[i];
            return r instanceof ServiceError
              ? { fire_key: f.fireKey, outcome: 'refused', execution_id: null, scheduled_time: f.scheduledTime, error: r.message }
              : { fire_key: f.fireKey, outcome: 'started', execution_id: r.executionId, scheduled_time: f.scheduledTime, error: null };
          }),
          ...unstarted,
        ];
        await recordFires(q, trigger, rows, tick);
      },
    });
  }
  return rows.map((r) => ({ fireKey: r.fire_key, outcome: r.outcome, executionId: r.execution_id, duplicate: false, error: r.error }));
}

/**
 * A fire's payload: the trigger's `payload` rendered over `roots` (trigger, and request or
 * message), never the data itself as a template; the reason in words when it cannot render.
 */
export function renderTriggerPayload(payload: Record<string, unknown>, roots: Record<string, unknown>): { payload: Record<string, unknown> } | { refused: string } {
  try {
    const rendered = renderValue(payload, roots, 'payload');
    if (!isPlainObject(rendered)) return { refused: 'payload did not render to an object' };
    return { payload: rendered };
  } catch (err) {
    if (err instanceof TemplateError) return { refused: err.message };
    throw err;
  }
}
