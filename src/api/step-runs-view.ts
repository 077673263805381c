import { isRecordedOnly } from '../../actors/to-machine-event.ts';
import { EVENT } from '../../machines/event-types.ts';
import { phaseOfOutcome } from '../../machines/execution/step-phase.ts';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import type { WaitEndedAtOnce } from '../../machines/execution/types.ts';
import type { EventRow } from '../db/execution.repo.ts';
import type { ChildAdmission } from '../db/execution-view.repo.ts';
import { isObject } from '../objects.ts';

// What GET /api/executions/{id}/steps/{step} answers, made from the step's events (pure): each
// run of its work (a command, a child execution, or a wait), when it was claimed, started and
// ended (the worker's true times, `context.at`, where its report gave them; else when the event
// was stored), and each task's attempts with their output and error. A wait runs from the event
// that set it (`waiting`) to the one that ended it; how it ended is the machine's reading, the
// status of the `step.exit` it recorded for that run (as GET /state reads the step), with that
// step.exit's error; one still waiting when the execution ended was cut short by that end:
// `cancelled`, as /state says; so is a command or child run the end found unfinished. A wait that
// ended as it began (it took a signal kept from before, or its `until` did not render to a time)
// had no seq and no event but its step.exit, which the machine marks `at_once`: a run of no seq
// that began and ended then.
// Only what moved the machine is read: an event appended once the execution had ended (its row's
// `status` is the execution's when appended: the terminal fast path of actors/fold.ts stores it
// and changes nothing) and a report the command machine found late or refused (the marks
// actors/to-machine-event.ts folds to nothing) are kept in the log, never in a run.

/** `delay_ms`: the retry's wait before it, from the end of the attempt before (null for the first, a time not known, or the attempt before not listed). */
export type AttemptView = { attempt: number; started_at: string | null; duration_ms: number | null; delay_ms: number | null; status: 'ok' | 'error'; error: unknown; output: unknown };
export type TaskView = { task: string; kind: string | null; attempts: AttemptView[] };
export type RunView = {
  /** null: a wait that ended as it began (`at_once`), under no seq. */
  seq: number | null;
  loop_index: number | null;
  command_id: number | null;
  worker_id: string | null;
  status: string;
  /**
   * When its work was issued: a command's issue (it waited for a free worker or room on its task's
   * limit until `claimed_at`), a child's start, a wait's begin. Without it a queued command read as
   * if it began at its claim.
   */
  issued_at: string | null;
  claimed_at: string | null;
  /**
   * Which claim of its command `worker_id` and `claimed_at` are of: 1, or N when the command was
   * claimed again after the worker holding it was lost (the reaper handed it on). A lost claim
   * reaches the log with no report, so from `issued_at` to `claimed_at` is then not only a wait
   * for a worker: the lost holders had it meanwhile. Null for what no worker claimed.
   */
  claim_attempt: number | null;
  started_at: string | null;
  finished_at: string | null;
  child_execution_id: number | null;
  tasks: TaskView[];
  /** How a wait that ended as it began ended (step.exit's `at_once`); null for every other run. */
  at_once: WaitEndedAtOnce | null;
  /** A wait's error (step.exit's: its `until` did not render, its signal timed out); a task's is in its attempts. */
  error: unknown;
};

/** `childTask`: the `playbook` task and attempt a child run is of (its child.started's), whose attempt its end is. */
type Run = RunView & { byTask: Map<string, TaskView>; childTask?: { task: string; attempt: number } };

/**
 * Appends an attempt with the retry's delay before it: a 1 s backoff between two 7 ms attempts was
 * left to the reader's arithmetic. Null where a time of either is not known, or where the attempt
 * before it is not listed (a task retried past 21 times reports its first and last ten failed
 * ones): the time since the last one listed held the attempts between, not one wait.
 */
function pushAttempt(t: TaskView, a: Omit<AttemptView, 'delay_ms'>): void {
  const last = t.attempts.at(-1);
  const prev = last && last.attempt === a.attempt - 1 ? last : undefined;
  const start = a.started_at === null ? NaN : Date.parse(a.started_at);
  const prevEnd = prev?.started_at && prev.duration_ms !== null ? Date.parse(prev.started_at) + prev.duration_ms : NaN;
  const delay = Number.isFinite(start) && Number.isFinite(prevEnd) ? Math.max(0, start - prevEnd) : null;
  t.attempts.push({ ...a, delay_ms: delay });
}

/** A run's statuses before it ends. */
const UNFINISHED: ReadonlySet<string> = new Set(['pending', 'claimed', 'running', 'waiting']);

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/**
 * A time as the API writes times, to the millisecond. The log stores when an event was written in
 * microseconds: an issue at .672533 beside a claim in the same statement at .672 (a claim time is
 * milliseconds) read as claimed before it was issued to a client that reads microseconds.
 */
const msTime = (iso: string | null | undefined): string | null => {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString();
};

/** The runs of a step from its events (in log order); each output capped by `cap`; `ended`: the execution has ended. */
export function stepRunsView(events: readonly EventRow[], cap: (output: unknown) => unknown, ended = false): RunView[] {
  // In the order they began; those of a seq also by it.
  const runs: Run[] = [];
  const bySeq = new Map<number, Run>();
  const newRun = (seq: number | null): Run => {
    const r: Run = { seq, loop_index: null, command_id: null, worker_id: null, status: 'pending', issued_at: null, claimed_at: null, claim_attempt: null, started_at: null, finished_at: null, child_execution_id: null, tasks: [], at_once: null, error: null, byTask: new Map() };
    runs.push(r);
    return r;
  };
  const runOf = (seq: number): Run => {
    let r = bySeq.get(seq);
    if (!r) {
      r = newRun(seq);
      bySeq.set(seq, r);
    }
    return r;
  };
  const taskOf = (r: Run, name: string, kind: string | null): TaskView => {
    let t = r.byTask.get(name);
    if (!t) {
      t = { task: name, kind, attempts: [] };
      r.byTask.set(name, t);
      r.tasks.push(t);
    }
    return t;
  };
  // Waits that ended, oldest first, each awaiting the step.exit the machine records for it (the
  // same transition, so next among the step's events; one that ended as it began has its own, `at_once`).
  const waitsEnded: Run[] = [];
  // The item a loop began last (`loop.item`, just before the work it starts): a command's issue says
  // its item, a child's start does since it has `loop_index` (a retry's child has no loop.item before it).
  let item: number | null = null;
  // A `playbook` task's own timers (its timeout, its retry's delay: timer.set with `for`) are no
  // run of the step: its children are; their timer.fired names only the seq.
  const taskTimers = new Set<number>();
  for (const e of events) {
    const ctx = isObject(e.context) ? e.context : {};
    if (movedNothing(e, ctx)) continue;
    if (e.event_type === EVENT.loopItem) {
      item = num(ctx.index);
      continue;
    }
    if (e.event_type === EVENT.stepExit) {
      const status = ctx.status;
      const ended = status === 'ok' || status === 'error' || status === 'timeout' ? phaseOfOutcome({ status }) : null;
      const atOnce = ctx.at_once === 'kept_signal' || ctx.at_once === 'until_failed' ? ctx.at_once : null;
      // Its own run, not a waiting one's end: it began (step.enter, the same transition) as it ended.
      const r = atOnce ? (ended === null ? undefined : newRun(null)) : waitsEnded.shift();
      if (!r || ended === null) continue;
      if (atOnce) {
        r.at_once = atOnce;
        r.issued_at = r.started_at = r.finished_at = msTime(e.created_at);
      }
      r.status = ended;
      r.error = e.error ?? null;
      continue;
    }
    const seq = num(ctx.seq);
    if (seq === null) continue;
    if (e.event_type === EVENT.timerSet && ctx.for !== undefined) taskTimers.add(seq);
    if (taskTimers.has(seq)) continue;
    const r = runOf(seq);
    const at = msTime(text(ctx.at) ?? e.created_at);
    if (e.command_id !== null) r.command_id = e.command_id;
    switch (e.event_type) {
      case EVENT.commandIssued:
        r.issued_at = at;
        r.loop_index = num(ctx.loop_index);
        item = null;
        r.command_id = num(ctx.command_id) ?? r.command_id;
        break;
      case EVENT.commandClaimed: {
        // Recorded with the claim's first report: after that report's events when they came in a
        // batch (reserved ids), so it moves the run to `claimed` only when it is not past that
        // already (a later claim, after a reclaim, starts again from `claimed`).
        const claimedAt = msTime(text(ctx.claimed_at) ?? e.created_at);
        const later = claimedAt !== null && (r.started_at === null || claimedAt > r.started_at);
        if (r.finished_at === null && (r.status === 'pending' || later)) r.status = 'claimed';
        r.claimed_at = claimedAt;
        r.claim_attempt = num(ctx.attempt) ?? r.claim_attempt;
        r.worker_id = text(ctx.worker_id) ?? e.worker_id;
        break;
      }
      case EVENT.commandStarted:
        r.status = 'running';
        r.started_at = at;
        r.worker_id = e.worker_id ?? r.worker_id;
        break;
      case EVENT.callAttempt: {
        const t = taskOf(r, text(ctx.task) ?? '?', text(ctx.kind));
        pushAttempt(t, { attempt: num(ctx.attempt) ?? t.attempts.length + 1, started_at: at, duration_ms: num(ctx.duration_ms), status: 'error', error: e.error ?? null, output: cap(isObject(e.result) ? e.result.output : null) });
        break;
      }
      case EVENT.callDone:
      case EVENT.callError: {
        const t = taskOf(r, text(ctx.task) ?? '?', text(ctx.kind));
        const attempts = num(ctx.attempts) ?? t.attempts.length + 1;
        const total = num(ctx.duration_ms);
        const last = num(ctx.attempt_ms) ?? total;
        // The last attempt ended with the task: its start is the task's end less its own length.
        const start = text(ctx.at) && total !== null && last !== null ? new Date(Date.parse(String(ctx.at)) + total - last).toISOString() : at;
        pushAttempt(t, { attempt: attempts, started_at: start, duration_ms: last, status: e.event_type === EVENT.callDone ? 'ok' : 'error', error: e.error ?? null, output: null });
        break;
      }
      case EVENT.commandCompleted:
      case EVENT.commandFailed:
        r.status = e.event_type === EVENT.commandCompleted ? 'completed' : 'failed';
        r.finished_at = at;
        fillOutputs(r, e.result, cap);
        break;
      case EVENT.childStarted:
        r.status = 'running';
        r.issued_at = r.started_at = at;
        r.child_execution_id = num(ctx.child_execution_id);
        r.loop_index = num(ctx.loop_index) ?? item;
        r.childTask = { task: text(ctx.task) ?? '?', attempt: num(ctx.attempt) ?? 1 };
        item = null;
        break;
      case EVENT.childFinished:
        r.status = text(ctx.status) ?? 'finished';
        r.finished_at = at;
        r.child_execution_id = num(ctx.child_execution_id) ?? r.child_execution_id;
        // No child was started (not found, refused inputs, too deep): the task's one attempt is its error.
        if (r.child_execution_id === null && text(ctx.task) !== null) {
          pushAttempt(taskOf(r, String(ctx.task), 'playbook'), { attempt: 1, started_at: at, duration_ms: 0, status: 'error', error: e.error ?? null, output: null });
        } else if (r.childTask) {
          // A child that ran is its task's attempt too, with the outcome the task took: else the
          // error that failed the step (the child's, a cancel's reason) was nowhere in its run.
          const took = r.started_at !== null && at !== null ? Date.parse(at) - Date.parse(r.started_at) : NaN;
          const status = ctx.status === 'completed' ? 'ok' : 'error';
          const output = { execution_id: r.child_execution_id, status: text(ctx.status), result: e.result ?? null };
          pushAttempt(taskOf(r, r.childTask.task, 'playbook'), { attempt: r.childTask.attempt, started_at: r.started_at, duration_ms: Number.isFinite(took) ? took : null, status, error: status === 'ok' ? null : (e.error ?? null), output: cap(output) });
        }
        break;
      case EVENT.timerSet:
      case EVENT.signalAwaited:
        r.status = 'waiting';
        r.issued_at = r.started_at = at;
        break;
      case EVENT.timerFired:
      case EVENT.signalReceived:
      case EVENT.waitTimedOut:
        r.finished_at = at;
        waitsEnded.push(r);
        break;
    }
  }
  // Work the execution's end cut short (a cancel, a failure elsewhere) has no end of its own in the
  // step's events (reports that came after are late, and command.cancelled names no step).
  return runs.map(({ byTask: _, childTask: __, ...r }) => (ended && UNFINISHED.has(r.status) && (r.status === 'waiting' || r.finished_at === null) ? { ...r, status: 'cancelled' } : r));
}

/**
 * The runs with what their command rows say of those a worker holds and has not reported on yet
 * (`held`): a claim reaches the log with its first report, so a task running for minutes would
 * read `pending`, unclaimed, until it ended. Such a run is `claimed`, by that worker, since then;
 * so is one whose reports are of an earlier claim, lost since (the row's is a later `attempt`).
 */
export function withHeldClaims(runs: RunView[], held: readonly { seq: number; worker_id: string | null; claimed_at: string | null; attempt: number }[]): RunView[] {
  const bySeq = new Map(held.map((h) => [h.seq, h]));
  return runs.map((r) => {
    const h = r.seq === null ? undefined : bySeq.get(r.seq);
    if (!h) return r;
    const claim = { worker_id: h.worker_id, claimed_at: h.claimed_at, claim_attempt: h.attempt };
    if (r.status === 'pending' || (UNFINISHED.has(r.status) && r.claim_attempt !== null && h.attempt > r.claim_attempt)) return { ...r, status: 'claimed', ...claim };
    // Cancelled while that worker held it, before any report of it was applied: still `cancelled`,
    // but by whom and since when it was held (its task may have run: its late lines are in the log).
    if (r.status === 'cancelled' && r.claimed_at === null) return { ...r, ...claim };
    return r;
  });
}

/**
 * True for an event the machine did not fold: a report marked late or refused by routing, or one
 * appended after the execution had ended. A `step.exit` recorded by the transition that ended it
 * carries the ended status and is its own record, so it is read.
 */
function movedNothing(e: EventRow, ctx: Record<string, unknown>): boolean {
  if (isRecordedOnly(ctx)) return true;
  return e.event_type !== EVENT.stepExit && isTerminalExecutionStatus(e.status);
}

/** The last attempt of each task takes its output from the command's report (`result.tasks.<task>.data`). */
function fillOutputs(r: Run, result: unknown, cap: (output: unknown) => unknown): void {
  const tasks = isObject(result) && isObject(result.tasks) ? result.tasks : {};
  for (const t of r.tasks) {
    const last = t.attempts.at(-1);
    const outcome = tasks[t.task];
    if (last && isObject(outcome)) last.output = cap(outcome.data ?? null);
  }
}

/**
 * The runs with their children's admissions (`admissions`, by child id): a child waiting on its
 * playbook's `concurrency` is `queued`, not running, and one admitted after waiting began to run
 * then (`started_at`), its start (`issued_at`) staying when it was queued: the time it waited
 * read as its run time. A child paused by hand (a pause does not cascade) is `paused`: read as
 * running, nothing said why its parent's step did not move on.
 */
export function withChildAdmissions(runs: RunView[], admissions: ReadonlyMap<number, ChildAdmission>): RunView[] {
  return runs.map((r) => {
    const a = r.child_execution_id === null ? undefined : admissions.get(r.child_execution_id);
    if (!a) return r;
    if (a.queued && r.status === 'running') return { ...r, status: 'queued', started_at: null };
    const run = a.paused && r.status === 'running' ? { ...r, status: 'paused' } : r;
    return a.admitted_at === null ? run : { ...run, started_at: a.admitted_at };
  });
}
