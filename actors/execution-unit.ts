import type { ClaimPolicy, CommandRow } from '../src/db/command.repo.ts';
import type { TxTiming } from '../src/db/db.ts';
import type { AdmitKey } from '../src/db/flow.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { CommandRef } from '../src/db/unit-read.ts';
import { WRITE_GUARD_SQLSTATE, type Claimer } from '../src/db/unit-write.ts';
import { ServiceError } from '../src/errors.ts';
import { sealAccessTokens } from './access-tokens.ts';
import type { EngineDeps } from './engine-deps.ts';
import { Fold, type Folded } from './fold.ts';
import { hydrate } from './hydrate.ts';
import { isLateCancelReport } from './late-cancel-report.ts';
import type { CompiledPlaybook } from './playbook-cache.ts';
import { readBefore, type Needs } from './prefetch.ts';
import { writeFolded, type Written } from './write.ts';
import { COMMAND_RULES } from '../machines/command-rules.ts';
import { MAX_CHILD_DEPTH } from './effect-rows.ts';

// A unit of work over a set of executions, along xstate's line, one file per step:
//   route (route-events.ts, start-execution.ts: what to fold)
//   → hydrate (hydrate.ts: every read of state; memory is a cache inside it)
//   → transition (fold.ts: xstate's pure transition, effects returned; synchronous)
//   → rows (effect-rows.ts: effects as rows, from what was read before the fold)
//   → write (write.ts: one statement of fixed text, src/db/unit-write.ts, guarded on what was read)
//   → publish (publish.ts: after commit, the state this process now holds).
// Starts, reports, cancels and wake-ups all take it; a write whose guard finds a row moved on
// writes nothing, and the unit is read afresh and routed again, as any optimistic writer does.

export type UnitRun<T> = {
  /** Executions the unit holds (events are folded into them; their inbox events are applied). */
  executionIds: readonly number[];
  /** Commands whose reports are folded, each with the execution it was reported for: their rows are read (or taken from memory) with the executions. */
  commands?: readonly CommandRef[];
  /** Executions known to have moved on since this process held them (inbox events): read, never taken from memory. */
  fresh?: ReadonlySet<number>;
  /** Playbooks the fold starts executions of (their children's catalog heads are read before it), as of this attempt. */
  starting?: () => readonly CompiledPlaybook[];
  /** The concurrency keys of those starts (their room is read before the fold: it admits at once where it can), as of this attempt. */
  startKeys?: () => readonly AdmitKey[];
  /** Folds the unit's events or starts into `fold` (synchronously) and returns what the caller answers with. */
  fold: (fold: Fold, commands: ReadonlyMap<number, CommandRow>) => T;
  claims?: readonly Claimer[];
  claimPolicy?: ClaimPolicy | null;
  /**
   * Each attempt in a transaction: `timeoutMs` bounds each of its statements, `begin` runs first
   * (to take a lock the unit depends on), `beforeCommit` writes beside the unit's write, knowing
   * what the fold answered (throwing from either rolls everything back).
   */
  tx?: { timeoutMs?: number; begin?: (q: Queryable) => Promise<void>; beforeCommit?: (q: Queryable, value: T) => Promise<void> };
  /** Before another attempt after the guard failed: read again what may be stale besides the state (cached catalog heads). */
  onMoved?: () => Promise<void>;
  /** Measure the hydrate and write steps (for a route probe). */
  timed?: boolean;
};

export type UnitDone<T> = Written & {
  value: T;
  folded: Folded;
  hydrateMs: number;
  writeMs: number;
  readNothing: boolean;
  /** With `run.tx` and `run.timed`: the connection checkout, the work up to COMMIT, and the COMMIT. */
  txTiming?: TxTiming;
  /** A limited command's slot came free, or commands were cancelled (EngineDeps.announce). */
  freedRoom: boolean;
  /** The limits whose commands gave their slots back (this server's admitter hears of them). */
  freedLimits: readonly string[];
};

/** Attempts of one unit before its error is the caller's: the guard fails only when another writer got there first. */
const MAX_ATTEMPTS = 8;
/**
 * Folds of one unit redone with what the last one lacked, beside its attempts: a chain of
 * children started at once lacks a read per level (its path, its id), and one more where the
 * child's playbook has `concurrency` (its key's room, known once its path is read), so twice as
 * many as the levels an execution may have (effect-rows.ts), and a few more for what else a fold
 * may lack.
 */
const MAX_LACKING_ROUNDS = 2 * MAX_CHILD_DEPTH + 8;
const DEADLOCK = '40P01';
const SERIALIZATION_FAILURE = '40001';
const UNIQUE_VIOLATION = '23505';
// The keys of what a unit numbers from the state it read: an execution's events (event_id) and
// the commands its machine issues (seq, from nextSeq). Two writers that read the same state write
// the same numbers, and the later one's insert fails on the key before its guard (last_event_id)
// is looked at: the statement inserts its commands first (its answer and the log's part read
// them), then its events, so the key stands for the guard and the unit is routed again. (Its
// waits are numbered alike but inserted after both, so their key never answers first.) The log
// is partitioned by execution id ranges (migrations/0023): a duplicate names the partition's key
// (event_p<lower bound>_pkey, event_default_pkey).
const NUMBERED_KEY = /^(?:event_(?:p\d+_|default_)?pkey|command_execution_id_seq_key)$/;

/** A fold lacked a read (prefetch.ts): the unit is routed again with it. */
class Lacking extends Error {
  readonly needs: Needs;
  constructor(needs: Needs) {
    super('the fold lacked a read');
    this.needs = needs;
  }
}

/**
 * A report was refused on a command row taken from memory: another server may have moved it
 * since (a claim taken over there, which writes nothing to the log this server's guard reads),
 * and a refusal writes no compare-and-set on it. The unit is routed again from a fresh read.
 */
class Remembered extends Error {
  constructor() {
    super('a refusal was decided on a remembered command row');
  }
}

/** Whether another writer moved a row the unit read (its write wrote nothing): route it again. */
function movedOn(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === WRITE_GUARD_SQLSTATE || e.code === DEADLOCK || e.code === SERIALIZATION_FAILURE || (e.code === UNIQUE_VIOLATION && typeof e.constraint === 'string' && NUMBERED_KEY.test(e.constraint));
}

/**
 * Runs a unit along the line up to its commit: hydrate, read what the fold will need, fold once,
 * write in one statement (committed by itself, or by the transaction `run.tx` asks for). When the
 * write's guard finds a row moved on, everything is read afresh and the unit runs again. The
 * caller publishes `published` (publish.ts).
 */
export async function runUnit<T>(deps: EngineDeps, run: UnitRun<T>): Promise<UnitDone<T>> {
  let fresh: ReadonlySet<number> | 'all' = run.fresh ?? new Set();
  let also: Needs | undefined;
  let sealed: Map<string, string> | undefined;
  let lacking = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const tx = run.tx;
      if (!tx) return announced(deps, await once(deps.db, deps, run, fresh, also, sealed));
      const txTiming: TxTiming | undefined = run.timed ? { checkoutMs: 0, bodyMs: 0, commitMs: 0 } : undefined;
      const done = await deps.db.tx(async (q) => {
        if (tx.timeoutMs !== undefined) await q.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(tx.timeoutMs))}`);
        await tx.begin?.(q);
        const unit = await once(q, deps, run, fresh, also, sealed);
        await tx.beforeCommit?.(q, unit.value);
        return unit;
      }, txTiming);
      return announced(deps, { ...done, txTiming });
    } catch (err) {
      // A fold redone with what it lacked is not another writer's doing: it takes no attempt.
      if (err instanceof Lacking && ++lacking < MAX_LACKING_ROUNDS) attempt--;
      else if (attempt >= MAX_ATTEMPTS) {
        // Nothing was written: the caller may send it again (a worker retries a 503 report).
        if (movedOn(err)) throw new ServiceError('write_contended', { code: 'write_contended', message: `moved on by other writers on each of ${MAX_ATTEMPTS} attempts; nothing was written, retry` });
        throw err;
      }
      if (err instanceof Lacking) {
        deps.metrics.routeRetries.inc({ reason: 'lacking' });
        also = { paths: new Set([...(also?.paths ?? []), ...err.needs.paths]), children: new Set([...(also?.children ?? []), ...err.needs.children]), ids: (also?.ids ?? 0) + err.needs.ids, rooms: new Map([...(also?.rooms ?? []), ...err.needs.rooms]), secrets: new Set(), started: new Set([...(also?.started ?? []), ...err.needs.started]) };
        // A child's plain access token: sealed here, the I/O step before the fold (which is pure
        // and cannot write), once for all later attempts; the fold is redone with its handle.
        if (err.needs.secrets.size) sealed = new Map([...(sealed ?? []), ...(await sealAccessTokens(deps, err.needs.secrets))]);
      } else if (movedOn(err) || err instanceof Remembered) {
        deps.metrics.routeRetries.inc({ reason: 'moved' });
        fresh = 'all';
        // Or another server took the room of a child's key this server remembered (the admission's
        // guard, migrations/0028): read again, not folded on the same memory till the attempts run out.
        if (also?.rooms.size) deps.rooms.forget([...also.rooms.values()]);
        await run.onMoved?.();
      } else throw err;
    }
  }
}

/**
 * After commit, where the bus takes announcements (EngineDeps.announce): the commands it issued
 * PENDING, and room it made (a limited command's slot freed, commands cancelled).
 */
function announced<T>(deps: EngineDeps, done: UnitDone<T>): UnitDone<T> {
  const a = deps.announce;
  if (!a) return done;
  if (done.pending.length) a.commands(done.pending);
  if (done.freedRoom) a.room();
  return done;
}

async function once<T>(q: Queryable, deps: EngineDeps, run: UnitRun<T>, fresh: ReadonlySet<number> | 'all', also: Needs | undefined, sealed: ReadonlyMap<string, string> | undefined): Promise<UnitDone<T>> {
  const t0 = run.timed ? performance.now() : 0;
  const unit = await hydrate(q, deps.cache, deps.snapshots, run.executionIds, run.commands ?? [], fresh);
  if (unit.missing.length) throw new ServiceError('not_found', `execution ${unit.missing[0]} not found`);
  const reads = await readBefore(q, unit.executions.map((h) => ({ id: h.row.execution_id, compiled: h.compiled })), run.starting?.() ?? [], run.startKeys?.() ?? [], deps.rooms, also, sealed);
  const hydrateMs = run.timed ? performance.now() - t0 : 0;
  // Waits count from the database's clock, which fires them, not this server's (src/waits/wait-clock.ts).
  const clock = deps.waitClock;
  const fold = new Fold(deps.cache, unit.executions, reads, unit.commands, clock ? () => clock.databaseNow() : undefined);
  const value = run.fold(fold, unit.commands);
  for (const id of fold.refusedCommands()) if (unit.remembered.has(id)) throw new Remembered();
  const needs = fold.needs();
  if (needs) throw new Lacking(needs);
  const folded = fold.folded();
  const t1 = run.timed ? performance.now() : 0;
  // A limited command that stops being held gives its slot back (a trigger counts it): the
  // reporting worker may take the next command of a key with room in the same write, and
  // claimers waiting for that key may take one now; a cancel may free slots too.
  const freesSlot = [...folded.commandUpdates.values()].some((u) => u.status !== u.expected_status && unit.commands.get(u.command_id)?.limit_name && !COMMAND_RULES.reclaim.from.includes(u.status));
  const written = await writeFolded(q, folded, run.claims, run.claimPolicy ?? null, freesSlot);
  // An admitted execution that ends frees its key's slot too, which a task's command of the same
  // limit may wait for (the release trigger NOTIFYs where the bus is PostgreSQL's).
  // A late report of a command cancelled while a worker held it gives back the slots it kept
  // until then: its limit's (migrations/0054), its ended execution's admission's (0055; a
  // command of no limit too). Triggers count them.
  const keptSlotEnds = [...folded.commandUpdates.values()].some(isLateCancelReport);
  const freedRoom = freesSlot || keptSlotEnds || folded.rows.cancels.length > 0 || folded.rows.admissionEnds.some((a) => a.held && a.limit !== null);
  // The limits those limited commands give slots back on: executions may be queued on them too.
  const freedLimits = new Set<string>();
  for (const u of folded.commandUpdates.values()) {
    const limit = unit.commands.get(u.command_id)?.limit_name;
    if (limit && ((u.status !== u.expected_status && !COMMAND_RULES.reclaim.from.includes(u.status)) || isLateCancelReport(u))) freedLimits.add(limit);
  }
  return { ...written, value, folded, hydrateMs, writeMs: run.timed ? performance.now() - t1 : 0, readNothing: unit.readNothing, freedRoom, freedLimits: [...freedLimits] };
}
