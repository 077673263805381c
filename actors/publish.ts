import { EVENT } from '../machines/event-types.ts';
import type { CommandRow } from '../src/db/command.repo.ts';
import type { UnitWait } from '../src/db/unit-write.ts';
import type { UnitRows } from './unit-types.ts';
import type { WaitClock } from '../src/waits/wait-clock.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { Folded } from './fold.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import { isLateCancelReport } from './late-cancel-report.ts';
import type { Snapshot } from './unit-types.ts';

/** An execution as a committed write left it: running with this state, or gone from memory. */
export type Published = { executionId: number; lastEventId: number; snapshot: Snapshot; snapshotEventId: number } | { executionId: number; gone: true };

/** What a committed unit's write left, as publishing reads it (execution-unit.ts's UnitDone). */
export type Committed = { readonly published: readonly Published[]; readonly folded: Folded; readonly claimed: readonly CommandRow[]; readonly freedLimits: readonly string[] };

/**
 * The last step of every unit, after its commit: this process holds the executions' new state and
 * the commands it claimed, traces get the unit, this server's timekeeper and admitter hear their share.
 */
export function publishCommitted(deps: Pick<EngineDeps, 'snapshots' | 'traces' | 'waitClock' | 'flowClock' | 'metrics' | 'rooms'>, done: Committed): void {
  publish(deps.snapshots, done.published);
  deps.traces?.committed(done.folded);
  publishWaits(deps.waitClock, done.folded.rows.waits);
  publishFlow(deps, done.folded, done.freedLimits);
  recordClaims(deps, done.claimed);
  countStarts(deps, done.folded.rows.events);
}

/**
 * svc_executions_started_total counts the executions the unit started: the `execution.started`
 * events it wrote, so a child a playbook task started counts, and a start that joined a debounce
 * window (nothing written) does not.
 */
function countStarts(deps: Pick<EngineDeps, 'metrics'>, events: UnitRows['events']): void {
  let started = 0;
  for (const e of events) if (e.event_type === EVENT.executionStarted) started++;
  if (started) deps.metrics.executionsStarted.inc(started);
}

/** This process now knows the state of every execution the unit held. */
function publish(snapshots: HotSnapshots | undefined, published: readonly Published[]): void {
  if (!snapshots) return;
  for (const p of published) {
    if ('gone' in p) snapshots.delete(p.executionId);
    else snapshots.set(p.executionId, p.lastEventId, p.snapshot, p.snapshotEventId);
  }
}

/** After commit: this server's timekeeper hears of the earliest wake-up time the unit wrote. */
function publishWaits(clock: WaitClock | undefined, waits: readonly UnitWait[]): void {
  if (!clock || !waits.length) return;
  let earliest = Infinity;
  for (const w of waits) if (w.wake_at !== null) earliest = Math.min(earliest, Date.parse(w.wake_at));
  // A wake-up is on the database's clock (effect-rows.ts); the timekeeper sleeps by this server's.
  if (earliest < Infinity) clock.nudge(clock.serverTimeOf(earliest));
}

/**
 * After commit, flow control's share: this server's admitter hears of executions queued (at the
 * close of a debounce window) or ended while queued or admitted, and of late reports of cancelled
 * commands (a slot is free now: an ended execution's kept one among them), and of the limits of
 * commands issued and of those that ended (`freedLimits`); the queued executions and limited commands are counted, and executions
 * admitted at their start; this server's memory of keys' room (key-rooms.ts) counts what the unit
 * took, queued and freed.
 */
function publishFlow(deps: Pick<EngineDeps, 'flowClock' | 'metrics' | 'rooms'>, folded: { rows: Pick<UnitRows, 'admissions' | 'admissionEnds' | 'commands'>; commandUpdates: Folded['commandUpdates'] }, freedLimits: readonly string[]): void {
  const { flowClock: clock, metrics, rooms } = deps;
  const { rows } = folded;
  const limited: string[] = [];
  for (const c of rows.commands) {
    if (c.limit_name === null) continue;
    metrics.flowQueued.inc({ limit: c.limit_name, kind: 'command' });
    limited.push(c.limit_name);
  }
  let earliest = Infinity;
  for (const a of rows.admissions) {
    const limit = a.limit_name ?? '';
    if (a.admitted) {
      // Admitted at its start: it never waited.
      if (a.limit_name !== null && a.limit_key !== null) rooms.took(a.limit_name, a.limit_key);
      metrics.flowAdmissions.inc({ limit, kind: 'execution' });
      metrics.flowWaitSeconds.observe({ limit, kind: 'execution' }, 0);
      continue;
    }
    if (a.limit_name !== null && a.limit_key !== null) rooms.queued(a.limit_name, a.limit_key);
    metrics.flowQueued.inc({ limit, kind: 'execution' });
    earliest = Math.min(earliest, a.not_before === null ? Date.now() : Date.parse(a.not_before));
  }
  for (const e of rows.admissionEnds) if (e.held && e.limit !== null && e.key !== null) rooms.gave(e.limit, e.key);
  if (!clock) return;
  if (limited.length) clock.limited(limited);
  if (rows.admissionEnds.length || [...folded.commandUpdates.values()].some(isLateCancelReport)) clock.freed();
  if (freedLimits.length) clock.freedOn(freedLimits);
  if (earliest < Infinity) clock.queued(earliest);
}

/**
 * After a claim committed (by a claim statement or a unit's write): this process holds the
 * commands as claimed (their reports may route from memory), and the metrics count them.
 */
export function recordClaims(deps: Pick<EngineDeps, 'snapshots' | 'flowClock' | 'metrics'>, claimed: readonly CommandRow[]): void {
  for (const c of claimed) deps.snapshots.commands.set(c);
  deps.metrics.commandsClaimed.inc(claimed.length);
  observeFlowClaims(deps, claimed);
  deps.metrics.batchFirstClaims.claimed(claimed);
}

/**
 * After a claim: the limited commands among `claimed` that took room on their key (`took_room`:
 * the claim statement counted them) count as admitted, and the admitter hears of their limits (a
 * rate's bucket was drawn on). One taken over from a lost holder kept its slot and drew no token:
 * not admitted again. One the reaper withdrew from a lost holder to its execution's pause is
 * claimed from PENDING after the resume (attempt 2) and takes a slot afresh: admitted again. Its
 * wait is observed at its first claim only (from created_at, the second would count its first run).
 */
function observeFlowClaims(deps: Pick<EngineDeps, 'flowClock' | 'metrics'>, claimed: readonly CommandRow[]): void {
  const limits: string[] = [];
  for (const c of claimed) {
    if (!c.limit_name || !c.took_room) continue;
    limits.push(c.limit_name);
    deps.metrics.flowAdmissions.inc({ limit: c.limit_name, kind: 'command' });
    if (c.claimed_at && c.attempt === 1) deps.metrics.flowWaitSeconds.observe({ limit: c.limit_name, kind: 'command' }, Math.max(0, c.claimed_at.getTime() - c.created_at.getTime()) / 1000);
  }
  if (limits.length) deps.flowClock?.limited(limits);
}
