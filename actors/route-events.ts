import { COMMAND_RULES } from '../machines/command-rules.ts';
import { reportVerdict } from '../machines/report-verdict.ts';
import type { ClaimPolicy, CommandRow, CommandStatus } from '../src/db/command.repo.ts';
import type { ExecutionRow } from '../src/db/execution.repo.ts';
import type { TxTiming } from '../src/db/db.ts';
import { lockAndLoadSql, parseLockAndLoad, type LockAndLoadOptions } from '../src/db/lock-and-load.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { WRITE_GUARD_SQLSTATE, type Claimer } from '../src/db/unit-write.ts';
import { ServiceError } from '../src/errors.ts';
import type { EventResult, RoutedEvent } from '../src/protocol.ts';
import type { EngineDeps } from './engine-deps.ts';
import { runUnit, type UnitDone } from './execution-unit.ts';
import type { Fold, Folded } from './fold.ts';
import { publish } from './publish.ts';
import type { RouteProbe } from './route-probe.ts';

/**
 * `claims`: workers that want their next commands from this routing (claim-ahead), in order;
 * `claimPolicy`: they may also take stranded commands this policy lets go (see unit-write.ts).
 * The rest make it take the locked path: `timeoutMs` bounds each of its statements, `beforeCommit`
 * writes beside it in its transaction (throwing rolls it back), `probe` receives its measurements.
 */
export type RouteOptions = {
  wake?: number[];
  claims?: Claimer[];
  claimPolicy?: ClaimPolicy | null;
  timeoutMs?: number;
  beforeCommit?: (q: Queryable) => Promise<void>;
  probe?: RouteProbe;
};

export type RouteResult = { results: EventResult[]; commands_generated: number; claimed: CommandRow[] };

// Deadlock (parent/child cascades), serialization, and a write guard: a command the locked path
// read (commands are not under the execution's lock) was claimed again before the write.
const DEADLOCK = '40P01';
const RETRYABLE_SQLSTATES = new Set([DEADLOCK, '40001', WRITE_GUARD_SQLSTATE]);
const MAX_ATTEMPTS = 5;
const UNIQUE_VIOLATION = '23505';

type Loaded = { executions: ExecutionRow[]; commands: CommandRow[] };
type Routed = RouteResult & { done: UnitDone<EventResult[]>; loaded: Loaded };

/** Routing from memory met something only the locked path decides (a refusal, a late report). */
class NotFromMemory extends Error {}

/**
 * Routes events to their executions, then routes executions that got inbox events (children's
 * results, cancels). When this server holds the state of every execution and command involved
 * (it routed them last), one statement does it all (routeFromMemory); otherwise, or when that
 * statement finds the rows moved on, one transaction: per-execution advisory locks in id order,
 * hydrate, fold, persist, optionally claim the next commands for the reporting worker, commit.
 */
export async function routeEvents(
  deps: EngineDeps,
  events: RoutedEvent[],
  opts: RouteOptions = {},
): Promise<RouteResult> {
  const started = performance.now();
  const locked = opts.timeoutMs !== undefined || opts.beforeCommit !== undefined || opts.probe !== undefined;
  const out = (locked ? undefined : await routeFromMemory(deps, events, opts)) ?? (await routeLocked(deps, events, opts));
  const committed = performance.now();
  publish(deps.snapshots, out.done.published);
  rememberCommands(deps, out);
  deps.metrics.routeSeconds.observe((performance.now() - started) / 1000);
  deps.metrics.eventsRouted.inc(events.length);
  const wakes = out.done.wakes;
  if (wakes.length) {
    try {
      await routeEvents(deps, [], { wake: wakes });
    } catch (err) {
      // The inbox events are committed; the inbox sweep applies them if this wake-up fails.
      deps.log.warn({ err: String(err), executions: wakes }, 'wake-up routing failed; the sweep will retry');
    }
  }
  if (opts.probe) opts.probe.issue_commands_ms = performance.now() - committed;
  return { results: out.results, commands_generated: out.commands_generated, claimed: out.claimed };
}

async function routeLocked(deps: EngineDeps, events: RoutedEvent[], opts: RouteOptions): Promise<Routed> {
  for (let attempt = 1; ; attempt++) {
    try {
      const ids = [...new Set([...events.map((e) => e.execution_id), ...(opts.wake ?? [])])];
      const commandIds = [...new Set(events.flatMap((e) => (e.command_id ? [e.command_id] : [])))];
      const sqlOpts: LockAndLoadOptions = { statementTimeoutMs: opts.timeoutMs, timed: opts.probe !== undefined };
      const timing: TxTiming = { checkoutMs: 0, bodyMs: 0, commitMs: 0 };
      // BEGIN, the advisory locks and the loads go in one round trip.
      const out = await deps.db.txWithPrelude(
        lockAndLoadSql(ids, commandIds, deps.snapshots.versions(ids), sqlOpts),
        async (q, results) => {
          const loaded = parseLockAndLoad(results, sqlOpts);
          if (opts.probe && loaded.serverMs) Object.assign(opts.probe, { lock_acquire_ms: loaded.serverMs.lock, state_load_ms: loaded.serverMs.load });
          const routed = await routeInUnit(deps, q, loaded, events, opts, false);
          await opts.beforeCommit?.(q);
          return routed;
        },
        timing,
      );
      if (opts.probe) {
        Object.assign(opts.probe, {
          pool_checkout_ms: timing.checkoutMs,
          engine_total_ms: timing.bodyMs,
          commit_ms: timing.commitMs,
          transaction_ms: timing.bodyMs + timing.commitMs,
        });
      }
      return out;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= MAX_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_SQLSTATES.has(code)) throw err;
    }
  }
}

/**
 * Routing without reading anything first: the executions' state and the reported commands' rows
 * come from what this server committed last (hot snapshots), and ONE autocommit statement takes
 * the advisory locks, writes, and checks that every execution and command was still as we held
 * it; if not, it writes nothing and the locked path routes the events. One round trip instead of
 * three (BEGIN with lock-and-load, the write, COMMIT). Undefined when it does not apply.
 */
async function routeFromMemory(deps: EngineDeps, events: RoutedEvent[], opts: RouteOptions): Promise<Routed | undefined> {
  if (opts.wake?.length || !events.length) return undefined;
  const executions: ExecutionRow[] = [];
  for (const id of new Set(events.map((e) => e.execution_id))) {
    const row = deps.snapshots.row(id);
    if (!row) return undefined;
    executions.push(row);
  }
  const commands: CommandRow[] = [];
  for (const id of new Set(events.flatMap((e) => (e.command_id ? [e.command_id] : [])))) {
    const row = deps.snapshots.commands.get(id);
    if (!row) return undefined;
    commands.push(row);
  }
  try {
    const out = await routeInUnit(deps, deps.db, { executions, commands }, events, opts, true);
    deps.metrics.routedFromMemory.inc();
    return out;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // `moved`: another server, claim or routing (a deadlock with a parent's or child's) got there first.
    const reason =
      err instanceof NotFromMemory ? 'verdict'
      : code === WRITE_GUARD_SQLSTATE || code === UNIQUE_VIOLATION || code === DEADLOCK ? 'moved'
      : undefined;
    if (!reason) throw err;
    deps.metrics.routeFallbacks.inc({ reason });
    return undefined;
  }
}

/** After commit: the commands this routing moved or handed out, as now stored. */
function rememberCommands(deps: EngineDeps, out: Routed): void {
  const hot = deps.snapshots.commands;
  const updates = out.done.folded.commandUpdates;
  for (const c of out.loaded.commands) {
    const update = updates.get(c.command_id);
    if (update) hot.set({ ...c, status: update.status });
  }
  for (const c of out.claimed) hot.set(c);
}

/**
 * Routes the events through one unit of work (execution-unit.ts) over the executions and commands
 * `loaded` (under their locks, or from memory: `fromMemory` then leaves refusals and late reports
 * to the locked path, which decides them on rows it read); claims the next commands for `opts.claims`.
 */
async function routeInUnit(
  deps: EngineDeps,
  q: Queryable,
  loaded: Loaded,
  events: RoutedEvent[],
  opts: RouteOptions,
  fromMemory: boolean,
): Promise<Routed> {
  const rows = loaded.executions;
  const found = new Set(rows.map((r) => r.execution_id));
  const missing = events.find((e) => !found.has(e.execution_id));
  if (missing) throw new ServiceError('not_found', `execution ${missing.execution_id} not found`);
  const probe = opts.probe;
  const commands = new Map(loaded.commands.map((c) => [c.command_id, c]));
  const done = await runUnit(q, deps.cache, deps.snapshots, {
    rows,
    singleStatement: fromMemory,
    fold: (fold) => foldRouted(fold, commands, events, fromMemory, probe),
    claims: opts.claims,
    claimPolicy: opts.claimPolicy,
    timed: probe !== undefined,
  });
  if (probe) {
    probe.state_load_ms += done.hydrateMs;
    recordWrite(probe, done.folded, done.writeMs);
  }
  const commandsGenerated = done.folded.rows.commands.length;
  for (const f of done.folded.rows.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  deps.metrics.commandsIssued.inc(commandsGenerated);
  deps.metrics.commandsClaimed.inc(done.claimed.length);
  deps.metrics.batchFirstClaims.claimed(done.claimed);
  return { results: done.value, commands_generated: commandsGenerated, claimed: done.claimed, done, loaded };
}

/** Folds the routed events in order (synchronously: the command machine's verdicts, then the execution's transition); returns their results. */
function foldRouted(fold: Fold, commands: ReadonlyMap<number, CommandRow>, events: RoutedEvent[], fromMemory: boolean, probe: RouteProbe | undefined): EventResult[] {
  const statusNow = new Map<number, CommandStatus>();
  const results: EventResult[] = [];
  if (probe) {
    // A fold redone with reads it lacked starts the lists afresh.
    probe.issued.length = 0;
    probe.commands_by_event.length = 0;
    probe.actionable_by_event.length = 0;
  }
  for (const [i, ev] of events.entries()) {
    if (probe) {
      // What folding this event issued, and whether it reached a running machine.
      const issuedBefore = fold.commandsIssued;
      const running = fold.statusOf(ev.execution_id) === 'running';
      const accepted = routeOne(ev);
      const issued = fold.issuedSince(issuedBefore);
      probe.commands_by_event[i] = issued.length;
      probe.actionable_by_event[i] = running && accepted;
      for (const c of issued) probe.issued.push({ execution_id: c.execution_id, seq: c.seq, event: i });
    } else routeOne(ev);
  }
  return results;

  /** Folds one event; true when it was accepted (not refused, not late). */
  function routeOne(ev: RoutedEvent): boolean {
    if (!ev.command_id) {
      results.push({ event_id: fold.apply(ev.execution_id, ev) });
      return true;
    }
    const cmd = commands.get(ev.command_id);
    if (!cmd || cmd.execution_id !== ev.execution_id) {
      if (fromMemory) throw new NotFromMemory();
      results.push({ event_id: null, error: 'unknown_command', detail: `command ${ev.command_id} does not belong to execution ${ev.execution_id}` });
      return false;
    }
    const current = statusNow.get(cmd.command_id) ?? cmd.status;
    const verdict = reportVerdict({ ...cmd, status: current }, ev.event_type, { attempt: ev.attempt, workerId: ev.worker_id });
    if (fromMemory && verdict.kind !== 'accept') throw new NotFromMemory();
    if (verdict.kind === 'refused') {
      if (verdict.code === 'stale_claim') {
        // Kept for the record (the log shows every attempt that ran), folded into nothing.
        const context = { ...(ev.context as object), refused: verdict.code, seq: cmd.seq, attempt: ev.attempt ?? null, command_attempt: cmd.attempt };
        fold.apply(ev.execution_id, { ...ev, step: ev.step ?? cmd.step, context });
      }
      results.push({ event_id: null, error: verdict.code, detail: verdict.message });
      return false;
    }
    if (verdict.kind === 'late') {
      // Late report for a finished or cancelled command: kept in the log, folded into nothing. It
      // records its own attempt; the command's may be a later claim's (`command_attempt`).
      const context = { ...(ev.context as object), late: true, seq: cmd.seq, attempt: verdict.attempt, command_attempt: cmd.attempt, command_status: current };
      results.push({ event_id: fold.apply(ev.execution_id, { ...ev, step: ev.step ?? cmd.step, context }) });
      return false;
    }
    if (current === COMMAND_RULES.claim.to) {
      // The claim is recorded in the log with the first report of that claim (no extra commit per claim).
      fold.apply(ev.execution_id, {
        event_type: 'command.claimed',
        step: cmd.step,
        command_id: cmd.command_id,
        worker_id: cmd.worker_id,
        context: { seq: cmd.seq, attempt: cmd.attempt, worker_id: cmd.worker_id, claimed_at: cmd.claimed_at?.toISOString() ?? null },
      });
    }
    const next = verdict.status;
    statusNow.set(cmd.command_id, next);
    fold.updateCommand({ command_id: cmd.command_id, status: next, expected_status: cmd.status, expected_attempt: cmd.attempt });
    results.push({ event_id: fold.apply(ev.execution_id, { ...ev, step: ev.step ?? cmd.step }, cmd) });
    return true;
  }
}

/** The write statement's share of a probe: the parts it carried report its time. */
function recordWrite(probe: RouteProbe, folded: Folded, ms: number): void {
  const held = folded.held;
  const events = folded.rows.events;
  const saved = held.filter((h) => h.dirty && h.snapshot).length;
  const late = held.filter((h) => h.dirty && !h.snapshot).length;
  const persisted = events.length > 0 ? 1 : 0;
  const withState = new Set(held.flatMap((h) => (h.snapshot ? [h.id] : [])));
  Object.assign(probe, {
    save_state_ms: saved ? ms : 0,
    save_state_calls: saved ? 1 : 0,
    save_state_terminal_lightweight_ms: late ? ms : 0,
    save_state_terminal_lightweight_calls: late ? 1 : 0,
    persist_event_compat_ms: persisted ? ms : 0,
    persist_event_compat_calls: persisted,
    // A write per event would have saved each running execution once per event appended to it.
    save_state_coalesced_count: Math.max(0, events.filter((e) => withState.has(e.execution_id)).length - saved),
  });
}
