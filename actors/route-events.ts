import type { ClaimPolicy, CommandRow } from '../src/db/command.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { Claimer, UnitIdempotencyKey } from '../src/db/unit-write.ts';
import type { EventResult, RoutedEvent } from '../src/protocol.ts';
import type { EngineDeps } from './engine-deps.ts';
import { runUnit } from './execution-unit.ts';
import type { Fold, Folded, RoutedItem } from './fold.ts';
import { publishCommitted } from './publish.ts';
import type { RouteProbe } from './route-probe.ts';
import { routeReport } from './route-report.ts';

/**
 * `claims`: workers that want their next commands from this routing (claim-ahead), in order;
 * `claimPolicy`: they may also take stranded commands this policy lets go (see unit-write.ts).
 * `wake`: executions that got inbox events, to apply. `timeoutMs` bounds each statement and
 * `beforeCommit` writes beside the routing, knowing its results (both make it run in a
 * transaction; throwing from `beforeCommit` rolls it back); `probe` receives its measurements (it
 * changes nothing else).
 */
export type RouteOptions = {
  wake?: number[];
  claims?: Claimer[];
  claimPolicy?: ClaimPolicy | null;
  timeoutMs?: number;
  beforeCommit?: (q: Queryable, results: readonly EventResult[], items: readonly RoutedItem[]) => Promise<void>;
  /** An idempotency key written by the routing's own statement, made from its results (null: none). */
  idempotencyKey?: (results: readonly EventResult[]) => UnitIdempotencyKey | null;
  probe?: RouteProbe;
};

/** `items`: the batch items the routing wrote at their reserved ids (actors/fold.ts). */
export type RouteResult = { results: EventResult[]; commands_generated: number; claimed: CommandRow[]; items: readonly RoutedItem[] };

/**
 * Routes events to their executions, then routes executions that got inbox events (children's
 * results, cancels): one unit of work (execution-unit.ts) for them all, on the one line every
 * start, report, cancel and wake-up takes.
 */
export async function routeEvents(deps: EngineDeps, events: RoutedEvent[], opts: RouteOptions = {}): Promise<RouteResult> {
  const started = performance.now();
  const probe = opts.probe;
  const wake = new Set(opts.wake ?? []);
  const before = opts.beforeCommit;
  const tx = opts.timeoutMs !== undefined || before ? { timeoutMs: opts.timeoutMs, beforeCommit: before && ((q: Queryable, v: { results: EventResult[]; items: readonly RoutedItem[] }) => before(q, v.results, v.items)) } : undefined;
  // Idle claimers of this server take what the unit issues beyond its own claimers' share.
  let committed = 0;
  const done = await deps.parked.offer(
    (parked) =>
      runUnit(deps, {
        executionIds: [...new Set([...events.map((e) => e.execution_id), ...wake])],
        commands: events.flatMap((e) => (e.command_id ? [{ execution_id: e.execution_id, command_id: e.command_id }] : [])),
        fresh: wake,
        fold: (fold, commands) => {
          const routed = foldRouted(fold, commands, events, probe);
          const key = opts.idempotencyKey?.(routed.results);
          if (key) fold.keepIdempotencyKey(key);
          return { ...routed, moved: movedCommands(fold, commands), items: fold.routedItems() };
        },
        claims: [...(opts.claims ?? []), ...parked],
        claimPolicy: opts.claimPolicy,
        tx,
        timed: probe !== undefined,
      }),
    (done) => {
      committed = performance.now();
      // The commands it moved, as now stored (those it handed out are publishing's).
      for (const c of done.value.moved) deps.snapshots.commands.set(c);
      publishCommitted(deps, done);
    },
  );
  if (done.readNothing) deps.metrics.routedFromMemory.inc();
  const commandsGenerated = done.folded.rows.commands.length;
  for (const f of done.folded.rows.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  deps.scheduleClock?.ended(done.folded.rows.finished);
  deps.metrics.commandsIssued.inc(commandsGenerated);
  deps.metrics.routeSeconds.observe((committed - started) / 1000);
  // Reports routed now, and the batch items this routing wrote at their reserved ids.
  deps.metrics.eventsRouted.inc(events.length + done.value.items.length);
  if (probe) {
    // No lock is taken (the write's guard stands for one): lock_acquire_ms stays 0.
    const t = done.txTiming ?? { checkoutMs: 0, bodyMs: committed - started, commitMs: 0 };
    Object.assign(probe, {
      pool_checkout_ms: t.checkoutMs,
      state_load_ms: done.hydrateMs,
      engine_total_ms: t.bodyMs,
      commit_ms: t.commitMs,
      transaction_ms: t.bodyMs + t.commitMs,
    });
    recordWrite(probe, done.folded, done.writeMs);
  }
  if (done.wakes.length) {
    try {
      await routeEvents(deps, [], { wake: done.wakes });
    } catch (err) {
      // The inbox events are committed; the inbox sweep applies them if this wake-up fails.
      deps.log.warn({ err: String(err), executions: done.wakes }, 'wake-up routing failed; the sweep will retry');
    }
  }
  if (probe) probe.issue_commands_ms = performance.now() - committed;
  return { results: done.value.results, commands_generated: commandsGenerated, claimed: done.claimed, items: done.value.items };
}

/** Folds the routed events in order (synchronously: the command machine's verdicts, then the execution's transition); returns their results. */
function foldRouted(fold: Fold, commands: ReadonlyMap<number, CommandRow>, events: RoutedEvent[], probe: RouteProbe | undefined): { results: EventResult[] } {
  const results: EventResult[] = [];
  if (probe) {
    // A unit routed again starts the lists afresh.
    probe.issued.length = 0;
    probe.commands_by_event.length = 0;
    probe.actionable_by_event.length = 0;
  }
  for (const [i, ev] of events.entries()) {
    if (probe) {
      // What folding this event issued, and whether it reached a running machine.
      const issuedBefore = fold.commandsIssued;
      const running = fold.statusOf(ev.execution_id) === 'running';
      const r = routeReport(fold, commands, ev);
      results.push(r.result);
      const issued = fold.issuedSince(issuedBefore);
      probe.commands_by_event[i] = issued.length;
      probe.actionable_by_event[i] = running && r.accepted;
      for (const c of issued) probe.issued.push({ execution_id: c.execution_id, seq: c.seq, event: i });
    } else results.push(routeReport(fold, commands, ev).result);
  }
  return { results };
}

/** The commands the fold moved (reports, batch items), as its write stores them. */
function movedCommands(fold: Fold, commands: ReadonlyMap<number, CommandRow>): CommandRow[] {
  return [...fold.commandUpdates()].flatMap((u) => {
    const c = commands.get(u.command_id);
    // The write moves heartbeat_at on (to its own now(): no clock here gives that instant); a
    // time past the claim's says a report of this claim was written (route-report.ts reportedInClaim).
    return c ? [{ ...c, status: u.status, report_id: u.report_id ?? c.report_id ?? null, heartbeat_at: new Date() }] : [];
  });
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
