import type { EngineDeps } from '../../actors/engine-deps.ts';
import { startExecutions, type StartInput, type Started } from '../../actors/start-execution.ts';
import { StartPreludeCache } from '../../actors/start-prelude-cache.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { setDebounceWindowsOpen } from '../db/flow.repo.ts';
import { appendInboxCancels, type InboxCancel } from '../db/inbox-cancels.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { findFires, recordFires, takeScheduleTicks, type FireRow, type TickAdvance, type TriggerFireRow, type TriggerKindName } from '../db/trigger.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import { TemplateError, renderValue } from '../dsl/render.ts';
import { isPlainObject } from '../objects.ts';
import { payloadProblem } from './payload-problem.ts';
import { databaseNow } from '../waits/wait-clock.ts';

/** A trigger as a fire names it. */
export type TriggerRef = { path: string; name: string; kind: TriggerKindName };

/** One fire to make: its key, the payload its templates rendered (or why they could not), or a skip. */
export type Fire = { fireKey: string; scheduledTime: Date | null } & ({ payload: Record<string, unknown> } | { refused: string } | { skipped: string });

/**
 * What came of a fire: the execution it started (now, or the first time when `duplicate`), or none;
 * `debounced`: a new fire that joined an open debounce window (its execution, queued, runs with
 * this fire's payload unless a later one comes), not an execution of its own.
 */
export type FireResult = { fireKey: string; outcome: FireRow['outcome']; executionId: number | null; duplicate: boolean; error: string | null; debounced?: boolean };

/**
 * A trigger's fires made together; `tick`: a schedule's next fire time moving on with them;
 * `replaces`: runs a fire of the group that starts replaces (overlap cancel_previous), cancelled
 * in its transaction, so only by a fire that is new and started; `live`: made only if the
 * trigger, as its transaction finds it, is still there and of its kind (`present`: a fire by hand
 * or a backfill), and not paused either (`active`: a delivery, a message); `catalogId` (with
 * `live`): and still of that version (a delivery checked against the trigger as read at its headers).
 */
export type FireGroup = { trigger: TriggerRef; fires: readonly Fire[]; tick?: { from: Date; to: Date | null; catalogId?: number }; replaces?: readonly number[]; live?: Liveness; catalogId?: number };

/**
 * Why a `live` group's fires were not recorded: its trigger was paused, removed, or (`changed`) a
 * newer version's by then than the one its fires were checked and rendered against (`catalogId`).
 */
export type Inactive = 'paused' | 'gone' | 'changed';

/** What a `live` group needs of its trigger when its fires are recorded (FireGroup). */
export type Liveness = 'present' | 'active';

/**
 * What came of a group: its fires' results, or `raced` (nothing was written for it) when another
 * server held or moved its schedule, or (`inactive`, a `live` group) its trigger was paused or
 * gone when its fires were recorded.
 */
export type GroupResult = { raced: true; inactive?: Inactive } | { raced: false; results: FireResult[] };

const UNIQUE_VIOLATION = '23505';
const FIRE_KEY = 'trigger_fire_pkey';
// Each race lost to another writer of the same fire key leaves that key recorded: the next attempt skips it.
const MAX_ATTEMPTS = 8;
const keyOf = (t: { path: string; name: string }) => `${t.path}\n${t.name}`;
/** A fire of a group in fireGroups' bookkeeping: its group's index and its key. */
const fireId = (group: number, fireKey: string) => `${group}\n${fireKey}`;

/** Live groups whose trigger the transaction found paused or gone (by group index): it is rolled back, and made again without them. */
class InactiveTriggers extends Error {
  readonly groups: ReadonlyMap<number, Inactive>;
  constructor(groups: ReadonlyMap<number, Inactive>) {
    super('a trigger was paused or removed while its fires were made');
    this.groups = groups;
  }
}

/**
 * Makes fires exactly once, in ONE transaction for all groups: each fire's row is written in the
 * transaction that starts its execution (actors/start-execution.ts, with
 * `execution.started.context.trigger`), and its key is the row's primary key, so a fire recorded
 * already (by this server or another, before a restart, by a redelivery) answers with what it
 * started then (`duplicate`) and starts nothing. A group with a `tick` is made only if its
 * schedule's row is taken (still due at `from`, of the version the tick read, held by no other server); it moves to `to`.
 * `prelude`: the catalog heads and ids the starts take (a caller that fires often keeps one);
 * `readFirst`: read which keys are recorded before the first write too (a backfill, whose range
 * may have fired already: a failed write would have folded and written all its starts for nothing);
 * `refill`: a fire whose key is recorded as skipped (overlap, a paused queue: it never started) is
 * made, replacing that record (a backfill, asked for those times), never twice (recordFires).
 */
export async function fireGroups(deps: EngineDeps, groups: readonly FireGroup[], opts: FireOptions = {}): Promise<GroupResult[]> {
  const prelude = opts.prelude ?? new StartPreludeCache();
  const done = new Map<string, FireResult>(); // by group index + fire key
  let raced = new Map<number, GroupResult & { raced: true }>();
  const inactive = new Map<number, Inactive>();
  // Fires (fireId) whose key is recorded as skipped, made again in place of that record (opts.refill).
  const refills = new Set<string>();
  for (let attempt = 1; ; attempt++) {
    // Written optimistically: a fire key recorded already (a redelivery, another server's) fails
    // the write on the primary key, and the next attempt reads the recorded ones, which answer
    // with their first result. A read before every write cost each webhook delivery a round trip
    // for the rare repeat.
    const keys = attempt === 1 && !opts.readFirst ? [] : groups.flatMap((g) => g.fires.map((f) => ({ path: g.trigger.path, name: g.trigger.name, fireKey: f.fireKey })));
    const recorded = new Map((await findFires(deps.db, keys)).map((r) => [`${keyOf(r)}\n${r.fire_key}`, r]));
    refills.clear();
    const pending = groups.map((g, gi) => {
      // A key twice in one group is made once; its repeats answer as duplicates of it (below).
      const seen = new Set<string>();
      return g.fires.filter((f) => {
        let r = recorded.get(`${keyOf(g.trigger)}\n${f.fireKey}`);
        if (r && opts.refill && r.outcome === 'skipped' && 'payload' in f && !done.has(fireId(gi, f.fireKey))) {
          refills.add(fireId(gi, f.fireKey));
          r = undefined;
        }
        if (r) done.set(fireId(gi, f.fireKey), { fireKey: f.fireKey, outcome: r.outcome, executionId: r.execution_id, duplicate: true, error: r.error });
        const first = !seen.has(f.fireKey);
        seen.add(f.fireKey);
        return first && !r && !done.has(fireId(gi, f.fireKey));
      });
    });
    try {
      const written = await fireOnce(deps, groups, pending, prelude, inactive, refills);
      raced = written.raced;
      for (const [gi, rows] of written.rows) {
        for (const r of rows) done.set(fireId(gi, r.fire_key), { fireKey: r.fire_key, outcome: r.outcome, executionId: r.execution_id, duplicate: false, error: r.error, ...(written.debounced.has(fireId(gi, r.fire_key)) ? { debounced: true } : {}) });
      }
      break;
    } catch (err) {
      // Each such attempt leaves out one group more: the attempts end.
      if (err instanceof InactiveTriggers) {
        for (const [gi, why] of err.groups) inactive.set(gi, why);
        continue;
      }
      const e = err as { code?: unknown; constraint?: unknown };
      // Another writer recorded one of these fires first: read what it did, make the rest.
      if (!(e.code === UNIQUE_VIOLATION && e.constraint === FIRE_KEY) || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
  return groups.map((g, gi): GroupResult => {
    const lost = raced.get(gi);
    if (lost) return lost;
    const results = g.fires.map((f, i) => {
      const r = done.get(fireId(gi, f.fireKey))!;
      return g.fires.findIndex((o) => o.fireKey === f.fireKey) === i ? r : { ...r, duplicate: true };
    });
    for (const r of results) deps.metrics.triggerFires.inc({ kind: g.trigger.kind, outcome: r.duplicate ? 'duplicate' : r.outcome });
    return { raced: false, results };
  });
}

/** How fireGroups goes about it (see there). */
export type FireOptions = { prelude?: StartPreludeCache; readFirst?: boolean; refill?: boolean };

/** A trigger's fires checked and rendered against its version `catalogId` found a newer one when recorded: nothing was written; read it again. */
export class TriggerChanged extends Error {
  constructor(trigger: TriggerRef) {
    super(`trigger ${trigger.name} of ${trigger.path} was changed by a new version while it fired: nothing started`);
  }
}

/**
 * Makes one trigger's fires (fireGroups of one group without a tick); `live`: 404 when the
 * trigger was removed (or paused, for `active`) by the time they are recorded, nothing written;
 * `catalogId` (with `live`): TriggerChanged when a newer version changed it by then.
 */
export async function fireTrigger(deps: EngineDeps, trigger: TriggerRef, fires: readonly Fire[], opts: FireOptions & { live?: Liveness; catalogId?: number } = {}): Promise<FireResult[]> {
  const { live, catalogId, ...rest } = opts;
  const [result] = await fireGroups(deps, [{ trigger, fires, ...(live ? { live } : {}), ...(catalogId !== undefined ? { catalogId } : {}) }], rest);
  if (result.raced && result.inactive === 'changed') throw new TriggerChanged(trigger);
  if (result.raced && result.inactive) {
    throw result.inactive === 'paused'
      ? new ServiceError('trigger_paused', `trigger ${trigger.name} of ${trigger.path} was paused while it fired: nothing started`)
      : notFound(`trigger ${trigger.name} of ${trigger.path} (removed while it fired: nothing started)`);
  }
  return result.raced ? [] : result.results;
}

/** `debounced`: the fires (fireId) that joined an open debounce window. */
type Written = { rows: Map<number, FireRow[]>; raced: Map<number, GroupResult & { raced: true }>; cancelled: number[]; debounced: Set<string> };

async function fireOnce(deps: EngineDeps, groups: readonly FireGroup[], pending: readonly (readonly Fire[])[], prelude: StartPreludeCache, inactive: ReadonlyMap<number, Inactive>, refills: ReadonlySet<string>): Promise<Written> {
  const ticks: (TickAdvance & { group: number })[] = groups.flatMap((g, gi) => (g.tick ? [{ path: g.trigger.path, name: g.trigger.name, from: g.tick.from, to: g.tick.to, catalogId: g.tick.catalogId, group: gi }] : []));
  const starting = pending.flatMap((fires, gi) => fires.flatMap((f) => ('payload' in f ? [{ group: gi, fire: f, payload: f.payload }] : [])));
  const open = (gi: number) => !inactive.has(gi);
  let taken = new Set<number>(groups.flatMap((_, gi) => (open(gi) ? [gi] : [])));
  // Groups whose schedule row this transaction holds (all without a tick), but those found inactive before.
  const take = async (q: Queryable) => {
    if (ticks.length === 0) return;
    const held = await takeScheduleTicks(q, ticks.filter((t) => open(t.group)));
    taken = new Set(groups.flatMap((g, gi) => ((!g.tick || held.has(keyOf(g.trigger))) && open(gi) ? [gi] : [])));
  };
  const written: Written = { rows: new Map(), raced: new Map(), cancelled: [], debounced: new Set() };
  // Debounce windows of runs a taken group replaces (cancel_previous), closed before the starts so
  // that its start opens a window of its own instead of joining the one it cancels; given back
  // when the group starts nothing (refused), which then cancels nothing either.
  let closedWindows = new Map<number, number[]>();
  const closeReplaced = async (q: Queryable) => {
    closedWindows = new Map();
    for (const [gi, g] of groups.entries()) {
      if (!g.replaces?.length || !taken.has(gi)) continue;
      closedWindows.set(gi, await setDebounceWindowsOpen(q, g.replaces, false));
    }
  };
  const record = async (q: Queryable, startedOf: (i: number) => Started | ServiceError | undefined) => {
    const fireRows: TriggerFireRow[] = [];
    const cancels: InboxCancel[] = [];
    let i = 0;
    written.rows.clear();
    written.debounced.clear();
    for (const [gi, fires] of pending.entries()) {
      const g = groups[gi];
      const rows: FireRow[] = [];
      for (const f of fires) {
        if (!('payload' in f)) {
          rows.push({ fire_key: f.fireKey, outcome: 'skipped' in f ? 'skipped' : 'refused', execution_id: null, scheduled_time: f.scheduledTime, error: 'skipped' in f ? f.skipped : f.refused });
          continue;
        }
        const r = startedOf(i++);
        if (!taken.has(gi)) continue;
        if (r !== undefined && !(r instanceof ServiceError) && r.debounced) written.debounced.add(fireId(gi, f.fireKey));
        rows.push(
          r instanceof ServiceError || r === undefined
            ? { fire_key: f.fireKey, outcome: 'refused', execution_id: null, scheduled_time: f.scheduledTime, error: r?.message ?? 'not started' }
            : { fire_key: f.fireKey, outcome: 'started', execution_id: r.executionId, scheduled_time: f.scheduledTime, error: null },
        );
      }
      if (!taken.has(gi)) continue;
      written.rows.set(gi, rows);
      fireRows.push(...rows.map((r) => ({ ...r, path: g.trigger.path, name: g.trigger.name, ...(refills.has(fireId(gi, r.fire_key)) ? { refill: true } : {}) })));
      const replacing = rows.findLast((r) => r.outcome === 'started');
      const closed = closedWindows.get(gi) ?? [];
      if (!replacing && closed.length > 0) await setDebounceWindowsOpen(q, closed, true);
      if (replacing && g.replaces) {
        const trigger = { name: g.trigger.name, kind: g.trigger.kind, fire_key: replacing.fire_key };
        for (const id of g.replaces) cancels.push({ executionId: id, context: { reason: `trigger ${g.trigger.name}: overlap cancel_previous`, trigger, cancelled_at: new Date(databaseNow(deps)).toISOString() } });
      }
    }
    written.raced = new Map(groups.flatMap((_, gi) => (taken.has(gi) ? [] : [[gi, { raced: true as const, ...(inactive.has(gi) ? { inactive: inactive.get(gi) } : {}) }]])));
    const now = await recordFires(q, fireRows, ticks.filter((t) => taken.has(t.group)));
    // A live group's trigger as the count's update found it (locked till commit): a pause or a
    // new version committed before it is seen here, however long ago the group's data arrived.
    const lost = new Map<number, Inactive>();
    for (const [gi, rows] of written.rows) {
      const g = groups[gi];
      if (!g.live || rows.length === 0) continue;
      const t = now.get(keyOf(g.trigger));
      if (!t || t.kind !== g.trigger.kind) lost.set(gi, 'gone');
      else if (t.paused && g.live === 'active') lost.set(gi, 'paused');
      else if (g.catalogId !== undefined && t.catalog_id !== g.catalogId) lost.set(gi, 'changed');
    }
    if (lost.size) throw new InactiveTriggers(lost);
    written.cancelled = await appendInboxCancels(q, cancels);
  };
  if (starting.length === 0) {
    await deps.db.tx(async (q) => {
      await take(q);
      await record(q, () => undefined);
    });
    return written;
  }
  const inputs: StartInput[] = starting.map((s) => {
    const t = groups[s.group].trigger;
    return { path: t.path, payload: s.payload, origin: { trigger: { name: t.name, kind: t.kind, fire_key: s.fire.fireKey } } };
  });
  await startExecutions(deps, inputs, prelude, {
    begin: async (q) => {
      await take(q);
      await closeReplaced(q);
      return (i) => taken.has(starting[i].group);
    },
    beforeCommit: (q, started) => record(q, (i) => started[i]),
  });
  if (written.cancelled.length > 0) {
    try {
      await routeEvents(deps, [], { wake: written.cancelled });
    } catch (err) {
      // The cancels are committed with the fires: the inbox sweep applies them.
      deps.log.warn({ err: String(err), executions: written.cancelled }, 'replaced runs not cancelled yet; the inbox sweep will');
    }
  }
  return written;
}

/**
 * A fire's payload: the trigger's `payload` rendered over `roots` (trigger, and request or
 * message), never the data itself as a template; the reason in words when it cannot render or
 * could not be stored (payloadProblem).
 */
export function renderTriggerPayload(payload: Record<string, unknown>, roots: Record<string, unknown>): { payload: Record<string, unknown> } | { refused: string } {
  try {
    const rendered = renderValue(payload, roots, 'payload');
    if (!isPlainObject(rendered)) return { refused: 'payload did not render to an object' };
    const problem = payloadProblem(rendered);
    return problem === undefined ? { payload: rendered } : { refused: problem };
  } catch (err) {
    if (err instanceof TemplateError) return { refused: err.message };
    throw err;
  }
}
