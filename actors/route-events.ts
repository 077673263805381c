import { COMMAND_RULES } from '../machines/command-rules.ts';
import { EVENT } from '../machines/event-types.ts';
import { isLiveExecutionStatus } from '../machines/statuses.ts';
import { CODE } from '../machines/error-codes.ts';
import { reportVerdict } from '../machines/report-verdict.ts';
import type { ClaimPolicy, CommandRow, CommandStatus } from '../src/db/command.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { Claimer, UnitIdempotencyKey } from '../src/db/unit-write.ts';
import { asObject } from '../src/objects.ts';
import type { EventResult, RoutedEvent } from '../src/protocol.ts';
import type { EngineDeps } from './engine-deps.ts';
import { runUnit } from './execution-unit.ts';
import type { Fold, Folded } from './fold.ts';
import { observeFlowClaims, publish, publishFlow, publishWaits } from './publish.ts';
import type { RouteProbe } from './route-probe.ts';

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
  beforeCommit?: (q: Queryable, results: readonly EventResult[]) => Promise<void>;
  /** An idempotency key written by the routing's own statement, made from its results (null: none). */
  idempotencyKey?: (results: readonly EventResult[]) => UnitIdempotencyKey | null;
  probe?: RouteProbe;
};

export type RouteResult = { results: EventResult[]; commands_generated: number; claimed: CommandRow[] };

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
  const tx = opts.timeoutMs !== undefined || before ? { timeoutMs: opts.timeoutMs, beforeCommit: before && ((q: Queryable, v: { results: EventResult[] }) => before(q, v.results)) } : undefined;
  const done = await runUnit(deps, {
    executionIds: [...new Set([...events.map((e) => e.execution_id), ...wake])],
    commandIds: [...new Set(events.flatMap((e) => (e.command_id ? [e.command_id] : [])))],
    fresh: wake,
    fold: (fold, commands) => {
      const routed = foldRouted(fold, commands, events, probe);
      const key = opts.idempotencyKey?.(routed.results);
      if (key) fold.keepIdempotencyKey(key);
      return routed;
    },
    claims: opts.claims,
    claimPolicy: opts.claimPolicy,
    tx,
    timed: probe !== undefined,
  });
  const committed = performance.now();
  publish(deps.snapshots, done.published);
  deps.traces?.committed(done.folded);
  publishWaits(deps.waitClock, done.folded.rows.waits);
  publishFlow(deps, done.folded.rows);
  rememberCommands(deps, done.value.moved, done.claimed);
  if (done.readNothing) deps.metrics.routedFromMemory.inc();
  const commandsGenerated = done.folded.rows.commands.length;
  for (const f of done.folded.rows.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  deps.metrics.commandsIssued.inc(commandsGenerated);
  deps.metrics.commandsClaimed.inc(done.claimed.length);
  observeFlowClaims(deps.metrics, done.claimed);
  deps.metrics.batchFirstClaims.claimed(done.claimed);
  deps.metrics.routeSeconds.observe((committed - started) / 1000);
  deps.metrics.eventsRouted.inc(events.length);
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
  return { results: done.value.results, commands_generated: commandsGenerated, claimed: done.claimed };
}

/** After commit: the commands this routing moved or handed out, as now stored. */
function rememberCommands(deps: EngineDeps, moved: readonly CommandRow[], claimed: readonly CommandRow[]): void {
  const hot = deps.snapshots.commands;
  for (const c of moved) hot.set(c);
  for (const c of claimed) hot.set(c);
}

/** Folds the routed events in order (synchronously: the command machine's verdicts, then the execution's transition); returns their results and the commands they moved. */
function foldRouted(fold: Fold, commands: ReadonlyMap<number, CommandRow>, events: RoutedEvent[], probe: RouteProbe | undefined): { results: EventResult[]; moved: CommandRow[] } {
  const statusNow = new Map<number, CommandStatus>();
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
      const accepted = routeOne(ev);
      const issued = fold.issuedSince(issuedBefore);
      probe.commands_by_event[i] = issued.length;
      probe.actionable_by_event[i] = running && accepted;
      for (const c of issued) probe.issued.push({ execution_id: c.execution_id, seq: c.seq, event: i });
    } else routeOne(ev);
  }
  const moved = [...statusNow].flatMap(([id, status]) => {
    const c = commands.get(id);
    return c ? [{ ...c, status }] : [];
  });
  return { results, moved };

  /** Folds one event; true when it was accepted (not refused, not late). */
  function routeOne(ev: RoutedEvent): boolean {
    const moot = mootControl(fold, ev);
    if (moot) {
      // Decided against the state it was read with (a wait another event ended first, a resume of
      // a running execution): not appended, so the log holds each wake-up, signal and pause once.
      results.push({ event_id: null, error: CODE.not_waiting, detail: moot });
      return false;
    }
    if (!ev.command_id) {
      results.push({ event_id: fold.apply(ev.execution_id, ev) });
      return true;
    }
    const cmd = commands.get(ev.command_id);
    if (!cmd || cmd.execution_id !== ev.execution_id) {
      results.push({ event_id: null, error: CODE.unknown_command, detail: `command ${ev.command_id} does not belong to execution ${ev.execution_id}` });
      return false;
    }
    const current = statusNow.get(cmd.command_id) ?? cmd.status;
    const verdict = reportVerdict({ ...cmd, status: current }, ev.event_type, { attempt: ev.attempt, workerId: ev.worker_id });
    if (verdict.kind === 'refused') {
      if (verdict.code === 'stale_claim') {
        // Recorded as a refusal (the log shows every attempt that ran), never as the event it
        // reported: a command completes once in the log. It folds into nothing.
        fold.apply(ev.execution_id, {
          event_type: EVENT.commandRefused,
          step: ev.step ?? cmd.step,
          command_id: cmd.command_id,
          worker_id: ev.worker_id,
          context: { ...asObject(ev.context), reported: ev.event_type, refused: verdict.code, seq: cmd.seq, attempt: ev.attempt ?? null, command_attempt: cmd.attempt },
          result: ev.result,
          error: ev.error,
        });
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
        event_type: EVENT.commandClaimed,
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

const WAIT_ENDING: ReadonlySet<string> = new Set([EVENT.timerFired, EVENT.waitTimedOut, EVENT.signalReceived]);

/**
 * Why an engine or operator event no longer applies to its execution as now held, or undefined
 * when it does: a timer, timeout or signal for a wait that is over, a pause of a paused (or
 * ended) execution, a resume of one not paused.
 */
function mootControl(fold: Fold, ev: RoutedEvent): string | undefined {
  const status = fold.statusOf(ev.execution_id);
  if (ev.event_type === EVENT.executionPaused) return status === 'running' ? undefined : `execution ${ev.execution_id} is ${status}`;
  if (ev.event_type === EVENT.executionResumed) return status === 'paused' ? undefined : `execution ${ev.execution_id} is ${status}, not paused`;
  // Admitted twice (an admission routed again after its server stopped): the second is moot.
  if (ev.event_type === EVENT.executionAdmitted) return status === 'queued' ? undefined : `execution ${ev.execution_id} is ${status}, not queued`;
  if (!WAIT_ENDING.has(ev.event_type)) return undefined;
  const seq = asObject(ev.context).seq;
  // A signal without seq is kept for a step that waits later: the machine decides (`bufferable`).
  if (ev.event_type === EVENT.signalReceived && seq === null) return status !== undefined && isLiveExecutionStatus(status) ? undefined : `execution ${ev.execution_id} is ${status}`;
  return typeof seq === 'number' && fold.pendingOf(ev.execution_id, seq)?.kind === 'wait' ? undefined : `execution ${ev.execution_id} no longer waits under seq ${String(seq)}`;
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
