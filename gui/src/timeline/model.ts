// The execution's Gantt read from its event log (pure, no I/O): a bar per run of a step, per
// command (a loop item is the command of its index), per task and per attempt of a retried task,
// per child execution and per wait; and, at the top level, the time the execution was queued by
// flow control or paused by an operator (nothing of it ran then). Times are the worker's true ones (`context.at`) where the
// report gave them, else when the event was stored (`created_at`, as for old executions): such
// bars are marked `approx`.
import { EVENT } from '../../../machines/event-types.ts';
import type { ExecutionEvent } from '../api.ts';
import { keyText } from '../flow-text.ts';

export type BarKind = 'step' | 'command' | 'task' | 'attempt' | 'child' | 'wait' | 'queued' | 'paused';
/** `running` has no end yet (nor `queued` and `paused`, a child held or paused: child-queue.ts); the others are how the bar's work ended. */
export type BarStatus = 'running' | 'ok' | 'error' | 'cancelled' | 'queued' | 'paused';

export type Bar = {
  id: string;
  kind: BarKind;
  /** Nesting under the step run (0) it belongs to; a queued or paused bar is the execution's (0, `step` ''). */
  depth: number;
  parent: string | null;
  label: string;
  step: string;
  /** Epoch milliseconds; `end` null while it runs. */
  start: number;
  end: number | null;
  /** When its work was issued: a command waited to be claimed until `start` (a worker, or room on its task's limit), a child was queued (child-queue.ts). */
  queuedFrom?: number;
  status: BarStatus;
  /** Some time came from `created_at` rather than a reported `at`. */
  approx: boolean;
  seq?: number;
  commandId?: number;
  loopIndex?: number;
  task?: string;
  taskKind?: string;
  attempt?: number;
  attempts?: number;
  /** A command's claim its bar is of (`command.claimed`'s attempt): past 1, it was claimed again after its worker was lost. */
  claimAttempt?: number;
  /** The claim (`worker`, `claimAttempt`, `start`) was read from the command's row: its worker had sent no report (held-claims.ts). */
  claimedOnRow?: boolean;
  childExecutionId?: number;
  childPath?: string;
  worker?: string;
  error?: unknown;
  /** What the work gave back (a task attempt's output, a child's result), as the events hold it. */
  output?: unknown;
  /** The events this bar was read from (its own, not its children's). */
  eventIds: number[];
};

export type Timeline = { start: number; end: number | null; bars: Bar[] };

type Ctx = Record<string, unknown>;
const ctxOf = (e: ExecutionEvent): Ctx => (e.context && typeof e.context === 'object' && !Array.isArray(e.context) ? (e.context as Ctx) : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const ms = (iso: string | undefined | null): number | undefined => {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};
const stored = (e: ExecutionEvent): number => ms(e.created_at) ?? 0;
/** The event's reported moment, or when it was stored. */
const when = (e: ExecutionEvent): { t: number; approx: boolean } => {
  const at = ms(str(ctxOf(e).at));
  return at === undefined ? { t: stored(e), approx: true } : { t: at, approx: false };
};

type Node = Bar & { children: Node[] };
/** Work under a step's run that has not ended yet (a command, a child, a wait). */
const isWorking = (bar: Node): boolean => bar.end === null;

/**
 * The bars of an execution from its events in log order, parents before their children.
 * `startedAt`/`finishedAt` are the execution's own times (its axis); open bars end when a
 * cancellation or the execution's end says so.
 */
export function buildTimeline(events: readonly ExecutionEvent[], execution: { started_at: string; finished_at: string | null }): Timeline {
  const roots: Node[] = [];
  const openRuns = new Map<string, Node[]>();
  const bySeq = new Map<number, Node>();
  // The item a loop began last (loop.item, just before the work it starts): a child's start did not say it before it had `loop_index`.
  let item: number | undefined;
  // A `playbook` task's timeout timer, by the child it times: set with the child's start (the
  // timer.set right after its child.started), called off with no event when the child finishes.
  let lastChild: Node | undefined;
  const timeoutOf = new Map<Node, Node>();
  const byCommandId = new Map<number, Node>();
  const tasksOf = new Map<Node, Map<string, Node>>();
  /** Commands whose claim time is known: without a reported start, the best start there is. */
  const claimed = new Set<Node>();
  /** The execution's queue or pause open now (it is in one at a time of each). */
  let queued: Node | undefined;
  let paused: Node | undefined;
  let n = 0;
  const add = (parent: Node | null, bar: Omit<Node, 'id' | 'depth' | 'parent' | 'children' | 'eventIds'>, e: ExecutionEvent): Node => {
    const node: Node = { ...bar, id: `b${n++}`, depth: parent ? parent.depth + 1 : 0, parent: parent?.id ?? null, children: [], eventIds: [e.event_id] };
    (parent ? parent.children : roots).push(node);
    return node;
  };
  /** The run of `step` open now (the latest entered), or a run made up for work whose enter is not in the log. */
  const runOf = (step: string, e: ExecutionEvent): Node => {
    const open = openRuns.get(step);
    if (open?.length) return open.at(-1)!;
    const run = add(null, { kind: 'step', label: step, step, start: stored(e), end: null, status: 'running', approx: true }, e);
    run.eventIds = [];
    openRuns.set(step, [run]);
    return run;
  };
  const commandOf = (e: ExecutionEvent): Node | undefined => {
    const c = ctxOf(e);
    const seq = num(c.seq);
    return (seq !== undefined ? bySeq.get(seq) : undefined) ?? (e.command_id !== null ? byCommandId.get(e.command_id) : undefined);
  };
  const taskOf = (cmd: Node, name: string, kind: string | undefined, e: ExecutionEvent, start: number, approx: boolean): Node => {
    let tasks = tasksOf.get(cmd);
    if (!tasks) tasksOf.set(cmd, (tasks = new Map()));
    let t = tasks.get(name);
    if (!t) {
      t = add(cmd, { kind: 'task', label: name, step: cmd.step, start, end: null, status: 'running', approx, seq: cmd.seq, commandId: cmd.commandId, loopIndex: cmd.loopIndex, task: name, taskKind: kind }, e);
      tasks.set(name, t);
    } else t.eventIds.push(e.event_id);
    return t;
  };
  // A bar ends once; what still ran under it when it ended was cut short.
  const close = (bar: Node, end: number, status: BarStatus) => {
    if (bar.end !== null) return;
    bar.end = Math.max(end, bar.start);
    if (bar.status === 'running') bar.status = status;
    for (const c of bar.children) close(c, end, 'cancelled');
  };
  // Each event is read once and noted on a bar at most once (a long loop's run notes thousands).
  const note = (bar: Node | undefined, e: ExecutionEvent) => {
    bar?.eventIds.push(e.event_id);
  };

  for (const e of events) {
    const c = ctxOf(e);
    // A report that came late (for a command already over) or was refused changes no bar.
    if (c.late === true) {
      note(commandOf(e), e);
      continue;
    }
    switch (e.event_type) {
      case EVENT.stepEnter: {
        if (!e.step) break;
        const run = add(null, { kind: 'step', label: e.step, step: e.step, start: stored(e), end: null, status: 'running', approx: false }, e);
        openRuns.set(e.step, [...(openRuns.get(e.step) ?? []), run]);
        break;
      }
      case EVENT.stepExit: {
        if (!e.step) break;
        const open = openRuns.get(e.step) ?? [];
        // The engine exits the step's oldest run whose work has ended (endedRun,
        // machines/execution/run-summary.ts), not its oldest run: two runs of one step at once
        // (branches of an inclusive `next` meeting there) may end in either order.
        const ended = open.findIndex((r) => !r.children.some(isWorking));
        const [run] = open.splice(Math.max(ended, 0), 1);
        if (!run) break;
        note(run, e);
        run.error = e.error ?? undefined;
        run.output = e.result ?? undefined;
        close(run, stored(e), str(c.status) === 'error' ? 'error' : 'ok');
        break;
      }
      case EVENT.stepReplayed:
      case EVENT.loopItem:
      case EVENT.loopDone:
        if (e.event_type === EVENT.loopItem) item = num(c.index);
        if (!e.step) break;
        note(runOf(e.step, e), e);
        // A retry took this step's outcome from the execution it retried: nothing ran (0 ms), and the row says so.
        if (e.event_type === EVENT.stepReplayed) runOf(e.step, e).label = `${e.step} (replayed)`;
        break;
      case EVENT.commandIssued: {
        if (!e.step) break;
        const run = runOf(e.step, e);
        const seq = num(c.seq);
        const loopIndex = num(c.loop_index);
        item = undefined;
        const commandId = num(c.command_id) ?? e.command_id ?? undefined;
        const cmd = add(
          run,
          { kind: 'command', label: loopIndex !== undefined ? `item ${loopIndex}` : `command ${seq ?? ''}`.trim(), step: e.step, start: stored(e), queuedFrom: stored(e), end: null, status: 'running', approx: true, seq, commandId, loopIndex },
          e,
        );
        if (seq !== undefined) bySeq.set(seq, cmd);
        if (commandId !== undefined) byCommandId.set(commandId, cmd);
        break;
      }
      case EVENT.commandClaimed: {
        const cmd = commandOf(e);
        if (!cmd) break;
        note(cmd, e);
        if (e.command_id !== null) byCommandId.set(e.command_id, cmd);
        cmd.worker = str(c.worker_id) ?? e.worker_id ?? cmd.worker;
        cmd.claimAttempt = num(c.attempt) ?? cmd.claimAttempt;
        // Until the worker says when it started, the claim is the best start known.
        const claimedAt = ms(str(c.claimed_at));
        if (claimedAt !== undefined) {
          cmd.start = claimedAt;
          claimed.add(cmd);
        }
        break;
      }
      case EVENT.commandStarted: {
        const cmd = commandOf(e);
        if (!cmd) break;
        note(cmd, e);
        const w = when(e);
        // A claim again after a worker was lost: the command starts over.
        if (cmd.children.length) {
          cmd.children = [];
          tasksOf.delete(cmd);
        }
        if (!w.approx || !claimed.has(cmd)) cmd.start = w.t;
        cmd.approx = w.approx;
        cmd.worker = e.worker_id ?? cmd.worker;
        break;
      }
      case EVENT.commandHeartbeat:
      case EVENT.commandRefused:
        note(commandOf(e), e);
        break;
      case EVENT.callAttempt: {
        const cmd = commandOf(e);
        if (!cmd) break;
        const w = when(e);
        const task = taskOf(cmd, str(c.task) ?? '?', str(c.kind), e, w.approx ? cmd.start : w.t, w.approx);
        const duration = num(c.duration_ms);
        const attempt = num(c.attempt) ?? task.children.length + 1;
        const start = w.approx ? (task.children.at(-1)?.end ?? task.start) : w.t;
        const bar = add(
          task,
          { kind: 'attempt', label: `attempt ${attempt}`, step: cmd.step, start, end: null, status: 'running', approx: w.approx || duration === undefined, seq: cmd.seq, commandId: cmd.commandId, loopIndex: cmd.loopIndex, task: task.task, taskKind: task.taskKind, attempt, error: e.error ?? undefined, output: resultOutput(e.result) },
          e,
        );
        close(bar, start + (duration ?? 0), 'error');
        break;
      }
      case EVENT.callDone:
      case EVENT.callError: {
        const cmd = commandOf(e);
        if (!cmd) break;
        const w = when(e);
        const tasks = [...(tasksOf.get(cmd)?.values() ?? [])];
        // Without `at`, a task begins when the one before it ended (they run one after another).
        const fallbackStart = tasks.filter((t) => t.end !== null).at(-1)?.end ?? cmd.start;
        const task = taskOf(cmd, str(c.task) ?? '?', str(c.kind), e, w.approx ? fallbackStart : w.t, w.approx);
        if (!w.approx) task.start = w.t;
        const duration = num(c.duration_ms);
        const attempts = num(c.attempts) ?? task.children.length + 1;
        const status: BarStatus = e.event_type === EVENT.callDone ? 'ok' : 'error';
        task.attempts = attempts;
        task.error = e.error ?? undefined;
        const end = duration !== undefined ? task.start + duration : undefined;
        if (attempts > 1) {
          // The last attempt has no call.attempt of its own: it ended with the task and lasted `attempt_ms`.
          const lastMs = num(c.attempt_ms);
          const before = task.children.at(-1)?.end ?? task.start;
          const lastStart = end !== undefined && lastMs !== undefined ? end - lastMs : before;
          const last = add(
            task,
            { kind: 'attempt', label: `attempt ${attempts}`, step: cmd.step, start: lastStart, end: null, status: 'running', approx: task.approx || lastMs === undefined, seq: cmd.seq, commandId: cmd.commandId, loopIndex: cmd.loopIndex, task: task.task, taskKind: task.taskKind, attempt: attempts, error: e.error ?? undefined },
            e,
          );
          if (end !== undefined) close(last, end, status);
        }
        if (end !== undefined) close(task, end, status);
        else task.status = status;
        break;
      }
      case EVENT.commandCompleted:
      case EVENT.commandFailed: {
        const cmd = commandOf(e);
        if (!cmd) break;
        note(cmd, e);
        const w = when(e);
        const status: BarStatus = e.event_type === EVENT.commandCompleted ? 'ok' : 'error';
        cmd.error = e.error ?? undefined;
        cmd.output = e.result ?? undefined;
        // Each task's final output is the command's report of it (`result.tasks.<task>.data`).
        const outcomes = e.result && typeof e.result === 'object' ? (e.result as { tasks?: Record<string, { data?: unknown; status?: string; error?: unknown }> }).tasks : undefined;
        for (const [name, t] of tasksOf.get(cmd) ?? []) {
          const outcome = outcomes?.[name];
          if (!outcome) continue;
          t.output = outcome.data;
          const last = t.children.at(-1);
          if (last && last.attempt === t.attempts) last.output = outcome.data;
        }
        cmd.approx ||= w.approx;
        close(cmd, w.t, status);
        break;
      }
      case EVENT.commandCancelled: {
        const seqs = Array.isArray(c.seqs) ? c.seqs.filter((s): s is number => typeof s === 'number') : [];
        for (const seq of seqs) {
          const cmd = bySeq.get(seq);
          if (!cmd) continue;
          note(cmd, e);
          close(cmd, stored(e), 'cancelled');
        }
        break;
      }
      case EVENT.childStarted: {
        if (!e.step) break;
        const run = runOf(e.step, e);
        const seq = num(c.seq);
        const id = num(c.child_execution_id);
        const child = add(run, { kind: 'child', label: id !== undefined ? `execution ${id}` : 'child', step: e.step, start: stored(e), end: null, status: 'running', approx: false, seq, task: str(c.task), childExecutionId: id, childPath: str(c.path), loopIndex: num(c.loop_index) ?? item }, e);
        item = undefined;
        lastChild = child;
        if (seq !== undefined) bySeq.set(seq, child);
        break;
      }
      case EVENT.childFinished: {
        const child = commandOf(e);
        if (!child) break;
        note(child, e);
        child.error = e.error ?? undefined;
        child.output = e.result ?? undefined;
        const status = str(c.status);
        close(child, stored(e), status === 'completed' ? 'ok' : status === 'cancelled' ? 'cancelled' : 'error');
        // Its timeout no longer runs: the timer waited until the child ended, not until the step did.
        const timeout = timeoutOf.get(child);
        if (timeout) close(timeout, stored(e), 'cancelled');
        break;
      }
      case EVENT.timerSet:
      case EVENT.signalAwaited: {
        if (!e.step) break;
        const run = runOf(e.step, e);
        const seq = num(c.seq);
        const signal = str(c.signal);
        // A `playbook` task's own timers (timer.set with `for`): its child's timeout, its retry's delay.
        const task = e.event_type === EVENT.timerSet ? str(c.task) : undefined;
        const purpose = str(c.for);
        const attempt = num(c.attempt);
        const label = signal ? `signal ${signal}` : task && purpose === 'timeout' ? `${task}: timeout` : task && purpose === 'retry' ? `retry ${attempt ?? '?'} of ${task}` : 'timer';
        const wait = add(run, { kind: 'wait', label, step: e.step, start: stored(e), end: null, status: 'running', approx: false, seq, ...(task && purpose ? { task, attempt } : {}) }, e);
        if (seq !== undefined) bySeq.set(seq, wait);
        if (purpose === 'timeout' && lastChild?.step === e.step && lastChild.task === task) timeoutOf.set(lastChild, wait);
        break;
      }
      case EVENT.timerFired:
      case EVENT.waitTimedOut:
      case EVENT.signalReceived: {
        const seq = num(c.seq);
        const wait = seq !== undefined ? bySeq.get(seq) : undefined;
        if (!wait || wait.kind !== 'wait') break;
        note(wait, e);
        close(wait, stored(e), e.event_type === EVENT.waitTimedOut ? 'error' : 'ok');
        break;
      }
      // The execution's own holds: no step ran while it was queued (flow control) or paused.
      case EVENT.executionQueued:
        queued = add(null, { kind: 'queued', label: queuedLabel(c), step: '', start: stored(e), end: null, status: 'running', approx: false }, e);
        break;
      case EVENT.executionAdmitted:
        if (!queued) break;
        note(queued, e);
        close(queued, stored(e), 'ok');
        queued = undefined;
        break;
      case EVENT.executionPaused:
        if (paused) break;
        // Labelled `on hold`: a bar is a button, and one named `…paused…` would also answer to the
        // execution's Pause control's name (role button, name `Pause`, matched as a substring).
        paused = add(null, { kind: 'paused', label: 'on hold', step: '', start: stored(e), end: null, status: 'running', approx: false }, e);
        break;
      case EVENT.executionResumed:
        if (!paused) break;
        note(paused, e);
        close(paused, stored(e), 'ok');
        paused = undefined;
        break;
      case EVENT.executionCancelled:
        for (const r of roots) close(r, stored(e), 'cancelled');
        break;
    }
  }
  const start = ms(execution.started_at) ?? (events.length ? stored(events[0]) : 0);
  const end = ms(execution.finished_at) ?? null;
  // A finished execution leaves nothing running (a bar whose end never came ends with it).
  if (end !== null) for (const r of roots) close(r, end, 'cancelled');
  const bars: Bar[] = [];
  const walk = (nodes: Node[]) => {
    for (const { children, ...bar } of nodes) {
      // A command of one task tried once is that task: one row, not two alike.
      const only = bar.kind === 'command' && children.length === 1 && children[0].kind === 'task' && !children[0].children.length ? children[0] : undefined;
      if (only) {
        bars.push({ ...bar, task: only.task, taskKind: only.taskKind, attempts: only.attempts, eventIds: [...bar.eventIds, ...only.eventIds.filter((id) => !bar.eventIds.includes(id))] });
        continue;
      }
      bars.push(bar);
      walk(children);
    }
  };
  walk(roots);
  return { start, end, bars };
}

/** What a queued execution waited for, from its execution.queued context: a limit's key and/or a debounce window. */
function queuedLabel(c: Ctx): string {
  const limit = str(c.limit);
  const key = str(c.key);
  // The empty key (a limit without `key:`) named as the Waits for panel names it, not `key ` and nothing.
  const on = limit ? `queued on limit ${limit}${key !== undefined ? `, key ${keyText(key)}` : ''}` : '';
  const debounce = str(c.debounce_until) ? 'debounce window' : '';
  return [on, debounce].filter(Boolean).join(' · ') || 'queued';
}

function resultOutput(result: unknown): unknown {
  return result && typeof result === 'object' && 'output' in result ? (result as { output: unknown }).output : undefined;
}

/** How long a bar lasted (or has lasted, at `now`). */
export const durationOf = (bar: Pick<Bar, 'start' | 'end'>, now: number): number => (bar.end ?? now) - bar.start;

/** The ids of a bar and of every bar under it, in order. */
export function withDescendants(bars: readonly Bar[], id: string): Bar[] {
  const ids = new Set([id]);
  const out: Bar[] = [];
  for (const b of bars) {
    if (ids.has(b.id) || (b.parent !== null && ids.has(b.parent))) {
      ids.add(b.id);
      out.push(b);
    }
  }
  return out;
}
