import { reportVerdict } from '../machines/report-verdict.ts';
import type { CommandRow, CommandStatus } from '../src/db/command.repo.ts';
import type { ExecutionRow } from '../src/db/execution.repo.ts';
import { lockAndLoadSql, parseLockAndLoad } from '../src/db/lock-and-load.ts';
import { WRITE_GUARD_SQLSTATE, type Claimer } from '../src/db/unit-write.ts';
import { ServiceError } from '../src/errors.ts';
import type { EngineDeps } from './engine-deps.ts';
import { ExecutionUnit, NeedsTransaction, type EventInput } from './execution-unit.ts';

/** An event addressed to an execution; `attempt` (from the claim) fences reports from stale claimers. */
export type RoutedEvent = EventInput & { execution_id: number; attempt?: number | null };

export type EventResult = { event_id: number } | { event_id: null; error: 'stale_claim' | 'not_holder' | 'not_claimed' | 'unknown_command'; detail: string };

/** `claims`: workers that want their next commands from this routing (claim-ahead), in order. */
export type RouteOptions = { wake?: number[]; claims?: Claimer[] };

export type RouteResult = { results: EventResult[]; commands_generated: number; claimed: CommandRow[] };

// Deadlock (parent/child cascades), serialization, and a write guard: a command the locked path
// read (commands are not under the execution's lock) was claimed again before the write.
const RETRYABLE_SQLSTATES = new Set(['40P01', '40001', WRITE_GUARD_SQLSTATE]);
const MAX_ATTEMPTS = 5;
const UNIQUE_VIOLATION = '23505';

type Loaded = { executions: ExecutionRow[]; commands: CommandRow[] };
type Routed = RouteResult & { wakes: number[]; unit: ExecutionUnit; loaded: Loaded };

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
  const out = (await routeFromMemory(deps, events, opts)) ?? (await routeLocked(deps, events, opts));
  out.unit.publish();
  rememberCommands(deps, out);
  deps.metrics.routeSeconds.observe((performance.now() - started) / 1000);
  deps.metrics.eventsRouted.inc(events.length);
  if (out.wakes.length) {
    try {
      await routeEvents(deps, [], { wake: out.wakes });
    } catch (err) {
      // The inbox events are committed; the inbox sweep applies them if this wake-up fails.
      deps.log.warn({ err: String(err), executions: out.wakes }, 'wake-up routing failed; the sweep will retry');
    }
  }
  return { results: out.results, commands_generated: out.commands_generated, claimed: out.claimed };
}

async function routeLocked(deps: EngineDeps, events: RoutedEvent[], opts: RouteOptions): Promise<Routed> {
  for (let attempt = 1; ; attempt++) {
    try {
      const ids = [...new Set([...events.map((e) => e.execution_id), ...(opts.wake ?? [])])];
      const commandIds = [...new Set(events.flatMap((e) => (e.command_id ? [e.command_id] : [])))];
      // BEGIN, the advisory locks and the loads go in one round trip.
      return await deps.db.txWithPrelude(lockAndLoadSql(ids, commandIds, deps.snapshots.versions(ids)), (q, results) => {
        const loaded = parseLockAndLoad(results);
        return routeInUnit(deps, new ExecutionUnit(q, deps.cache, deps.snapshots), loaded, events, opts, false);
      });
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
    const unit = new ExecutionUnit(deps.db, deps.cache, deps.snapshots, { singleStatement: true });
    const out = await routeInUnit(deps, unit, { executions, commands }, events, opts, true);
    deps.metrics.routedFromMemory.inc();
    return out;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const reason =
      err instanceof NotFromMemory ? 'verdict'
      : err instanceof NeedsTransaction ? 'needs_transaction'
      : code === WRITE_GUARD_SQLSTATE || code === UNIQUE_VIOLATION ? 'moved'
      : undefined;
    if (!reason) throw err;
    deps.metrics.routeFallbacks.inc({ reason });
    return undefined;
  }
}

/** After commit: the commands this routing moved or handed out, as now stored. */
function rememberCommands(deps: EngineDeps, out: Routed): void {
  const hot = deps.snapshots.commands;
  for (const c of out.loaded.commands) {
    const update = out.unit.commandUpdates.get(c.command_id);
    if (update) hot.set({ ...c, status: update.status });
  }
  for (const c of out.claimed) hot.set(c);
}

/**
 * Folds the events into `unit` over the executions and commands `loaded` (under their locks, or
 * from memory: `fromMemory` then leaves refusals and late reports to the locked path, which
 * decides them on rows it read), and writes it; claims the next commands for `opts.claims`.
 */
async function routeInUnit(
  deps: EngineDeps,
  unit: ExecutionUnit,
  loaded: Loaded,
  events: RoutedEvent[],
  opts: RouteOptions,
  fromMemory: boolean,
): Promise<Routed> {
  const rows = loaded.executions;
  const found = new Set(rows.map((r) => r.execution_id));
  const missing = events.find((e) => !found.has(e.execution_id));
  if (missing) throw new ServiceError('not_found', `execution ${missing.execution_id} not found`);
  await unit.holdAll(rows);

  const commands = new Map(loaded.commands.map((c) => [c.command_id, c]));
  const statusNow = new Map<number, CommandStatus>();
  const results: EventResult[] = [];
  for (const ev of events) {
    if (!ev.command_id) {
      results.push({ event_id: await unit.apply(ev.execution_id, ev) });
      continue;
    }
    const cmd = commands.get(ev.command_id);
    if (!cmd || cmd.execution_id !== ev.execution_id) {
      if (fromMemory) throw new NotFromMemory();
      results.push({ event_id: null, error: 'unknown_command', detail: `command ${ev.command_id} does not belong to execution ${ev.execution_id}` });
      continue;
    }
    const current = statusNow.get(cmd.command_id) ?? cmd.status;
    const verdict = reportVerdict({ ...cmd, status: current }, ev.event_type, { attempt: ev.attempt, workerId: ev.worker_id });
    if (fromMemory && verdict.kind !== 'accept') throw new NotFromMemory();
    if (verdict.kind === 'refused') {
      results.push({ event_id: null, error: verdict.code, detail: verdict.message });
      continue;
    }
    if (verdict.kind === 'late') {
      // Late report for a finished or cancelled command: kept in the log, folded into nothing. It
      // records its own attempt; the command's may be a later claim's (`command_attempt`).
      const context = { ...(ev.context as object), late: true, seq: cmd.seq, attempt: verdict.attempt, command_attempt: cmd.attempt, command_status: current };
      results.push({ event_id: await unit.apply(ev.execution_id, { ...ev, step: ev.step ?? cmd.step, context }) });
      continue;
    }
    if (current === 'CLAIMED') {
      // The claim is recorded in the log with the first report of that claim (no extra commit per claim).
      await unit.apply(ev.execution_id, {
        event_type: 'command.claimed',
        step: cmd.step,
        command_id: cmd.command_id,
        worker_id: cmd.worker_id,
        context: { seq: cmd.seq, attempt: cmd.attempt, worker_id: cmd.worker_id, claimed_at: cmd.claimed_at?.toISOString() ?? null },
      });
    }
    const next = verdict.status;
    statusNow.set(cmd.command_id, next);
    unit.commandUpdates.set(cmd.command_id, { command_id: cmd.command_id, status: next, expected_status: cmd.status, expected_attempt: cmd.attempt });
    results.push({ event_id: await unit.apply(ev.execution_id, { ...ev, step: ev.step ?? cmd.step }, cmd) });
  }
  const claimed = await unit.flush(opts.claims);
  for (const f of unit.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  deps.metrics.commandsIssued.inc(unit.commandsGenerated);
  deps.metrics.commandsClaimed.inc(claimed.length);
  return { results, commands_generated: unit.commandsGenerated, claimed, wakes: [...unit.wakes], unit, loaded };
}
