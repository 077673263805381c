import { reportVerdict } from '../machines/report-verdict.ts';
import type { CommandRow, CommandStatus } from '../src/db/command.repo.ts';
import { lockAndLoadSql, parseLockAndLoad } from '../src/db/lock-and-load.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { ServiceError } from '../src/errors.ts';
import type { EngineDeps } from './engine-deps.ts';
import { ExecutionUnit, type EventInput } from './execution-unit.ts';

/** An event addressed to an execution; `attempt` (from the claim) fences reports from stale claimers. */
export type RoutedEvent = EventInput & { execution_id: number; attempt?: number | null };

export type EventResult = { event_id: number } | { event_id: null; error: 'stale_claim' | 'not_holder' | 'not_claimed' | 'unknown_command'; detail: string };

/** Workers that want their next commands from this routing (claim-ahead), in order. */
export type Claim = { workerId: string; max: number };
export type RouteOptions = { wake?: number[]; claims?: Claim[] };

export type RouteResult = { results: EventResult[]; commands_generated: number; claimed: CommandRow[] };

const RETRYABLE_SQLSTATES = new Set(['40P01', '40001']); // deadlock (parent/child cascades), serialization
const MAX_ATTEMPTS = 5;

/**
 * Routes events to their executions in one transaction: per-execution advisory locks in id
 * order, hydrate, fold, persist, optionally claim the next commands for the reporting worker,
 * commit; then routes executions that got inbox events (children's results, cancels).
 */
export async function routeEvents(
  deps: EngineDeps,
  events: RoutedEvent[],
  opts: RouteOptions = {},
): Promise<RouteResult> {
  const started = performance.now();
  let out: (RouteResult & { wakes: number[]; unit: ExecutionUnit }) | undefined;
  for (let attempt = 1; !out; attempt++) {
    try {
      const ids = [...new Set([...events.map((e) => e.execution_id), ...(opts.wake ?? [])])];
      const commandIds = [...new Set(events.flatMap((e) => (e.command_id ? [e.command_id] : [])))];
      // BEGIN, the advisory locks and the loads go in one round trip.
      out = await deps.db.txWithPrelude(lockAndLoadSql(ids, commandIds, deps.snapshots.versions(ids)), (q, results) =>
        routeInTransaction(deps, q, parseLockAndLoad(results), events, opts),
      );
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= MAX_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_SQLSTATES.has(code)) throw err;
    }
  }
  out.unit.publish();
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

async function routeInTransaction(
  deps: EngineDeps,
  q: Queryable,
  loaded: ReturnType<typeof parseLockAndLoad>,
  events: RoutedEvent[],
  opts: RouteOptions,
): Promise<RouteResult & { wakes: number[]; unit: ExecutionUnit }> {
  const rows = loaded.executions;
  const found = new Set(rows.map((r) => r.execution_id));
  const missing = events.find((e) => !found.has(e.execution_id));
  if (missing) throw new ServiceError('not_found', `execution ${missing.execution_id} not found`);
  const unit = new ExecutionUnit(q, deps.cache, deps.snapshots);
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
      results.push({ event_id: null, error: 'unknown_command', detail: `command ${ev.command_id} does not belong to execution ${ev.execution_id}` });
      continue;
    }
    const current = statusNow.get(cmd.command_id) ?? cmd.status;
    const verdict = reportVerdict({ ...cmd, status: current }, ev.event_type, { attempt: ev.attempt, workerId: ev.worker_id });
    if (verdict.kind === 'refused') {
      results.push({ event_id: null, error: verdict.code, detail: verdict.message });
      continue;
    }
    if (verdict.kind === 'late') {
      // Late report for a finished or cancelled command: kept in the log, folded into nothing.
      const context = { ...(ev.context as object), late: true, seq: cmd.seq, attempt: cmd.attempt, command_status: current };
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
    unit.commandUpdates.set(cmd.command_id, { command_id: cmd.command_id, status: next });
    results.push({ event_id: await unit.apply(ev.execution_id, { ...ev, step: ev.step ?? cmd.step }, cmd) });
  }
  const claimed = await unit.flush(opts.claims);
  for (const f of unit.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  deps.metrics.commandsIssued.inc(unit.commandsGenerated);
  deps.metrics.commandsClaimed.inc(claimed.length);
  return { results, commands_generated: unit.commandsGenerated, claimed, wakes: [...unit.wakes], unit };
}
