// One execution's trace as its events come: what is open (the execution, runs of steps, commands,
// playbook tasks) and, as each closing event comes, the finished span. Pure: events in, span
// records out (otlp-export.ts hands them to the SDK). Never a value of the payload, a result, a
// rendered input or an error message: names, ids, numbers, statuses and error codes only.
import { EVENT } from '../../machines/event-types.ts';
import { isObject } from '../objects.ts';
import { childCallSpanId, commandSpanId, executionSpanId, stepRunSpanId, taskAttemptSpanId, traceIdOf, type TraceSalt } from './trace-ids.ts';
import type { CommittedEvent, HeldContext } from './trace-sink.ts';
import { keyOf } from '../../machines/execution/keys.ts';

export type Attributes = Record<string, string | number | boolean>;

/** A finished span, with explicit ids and times (ms since the epoch). */
export type SpanRecord = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: 'internal' | 'client';
  startMs: number;
  endMs: number;
  attributes: Attributes;
  /** `error`: the span's outcome failed (its `error.type` says how); unset otherwise. */
  error: string | null;
  events: { name: string; timeMs: number; attributes?: Attributes }[];
};

type Run = { id: number; step: string; startMs: number; replayed: boolean };
type Command = { seq: number; step: string | null; run: number | null; loopIndex: number | null; startMs: number; claimAttempt: number; workerId: string | null; marks: SpanRecord['events'] };
type ChildCall = { seq: number; step: string | null; run: number | null; task: string; attempt: number; loopIndex: number | null; path: string; childId: number; startMs: number };

/** A command's claim as its row keeps it (src/db/command.repo.ts HeldStepCommand): times as ISO text. */
export type RowClaim = { seq: number; worker_id: string | null; claimed_at: string | null; attempt: number };

/** What the unit's machine context says of an execution (its run numbers, what each seq waits for); null for events read back from the log. */
export type Hint = HeldContext | null;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const codeOf = (error: unknown): string | null => (isObject(error) && typeof error.code === 'string' && error.code ? error.code : null);

/** When an event happened: its reported moment (`context.at`), else when it was written, else when this server saw it. */
function timeOf(ev: CommittedEvent, ctx: Record<string, unknown>, seenMs: number): number {
  const at = typeof ctx.at === 'string' ? Date.parse(ctx.at) : NaN;
  if (Number.isFinite(at)) return at;
  const written = ev.created_at ? Date.parse(ev.created_at) : NaN;
  return Number.isFinite(written) ? written : seenMs;
}

export class ExecutionTrace {
  readonly id: number;
  readonly #salt: TraceSalt;
  root: number;
  path: string;
  parent: { executionId: number; seq: number } | null;
  /** The last event of its log this trace has taken in (0: none). */
  lastEventId = 0;
  /** Whether the execution ended (its span was made). */
  ended = false;
  #traceId: string;
  #startMs: number | null = null;
  #startAttributes: Attributes = {};
  #runsEntered = 0;
  // Its pauses: since when it is paused now (null: it is not), the time paused before, and the
  // moments as events of its span (a pause made every span it held look like slow work).
  #pausedSince: number | null = null;
  #pausedMs = 0;
  // How long it waited to be admitted (its playbook's concurrency, a debounce window): from its start
  // to its first execution.admitted; null when it never waited. Its span otherwise read as slow work.
  #queuedMs: number | null = null;
  readonly #marks: SpanRecord['events'] = [];
  readonly #runs = new Map<number, Run>();
  readonly #commands = new Map<number, Command>();
  readonly #children = new Map<number, ChildCall>();

  constructor(salt: TraceSalt, id: number, root: number, path: string, parent: { executionId: number; seq: number } | null) {
    this.#salt = salt;
    this.id = id;
    this.root = root;
    this.path = path;
    this.parent = parent;
    this.#traceId = traceIdOf(salt, root);
  }

  /**
   * Takes in the execution's next events, in log order; pushes to `out` the spans they end. `hint`
   * (the machine's context after them) names run numbers exactly; without it they are counted.
   */
  take(events: readonly CommittedEvent[], hint: Hint, seenMs: number, out: SpanRecord[]): void {
    const entered = hint ? events.filter((e) => e.event_type === EVENT.stepEnter).length : 0;
    let nextRun = hint ? hint.nextRun - entered : 0;
    const exited = new Set<number>();
    for (const ev of events) {
      this.lastEventId = Math.max(this.lastEventId, ev.event_id);
      if (this.ended) continue;
      const ctx = isObject(ev.context) ? ev.context : {};
      if (ctx.late === true) continue; // a report of a finished command: it changes nothing
      const t = timeOf(ev, ctx, seenMs);
      switch (ev.event_type) {
        case EVENT.executionStarted:
          this.#started(ctx, t);
          break;
        case EVENT.stepEnter: {
          const id = hint ? nextRun++ : this.#runsEntered + 1;
          this.#runsEntered = Math.max(this.#runsEntered, id);
          this.#runs.set(id, { id, step: ev.step ?? '', startMs: t, replayed: false });
          break;
        }
        case EVENT.stepReplayed: {
          const run = this.#latestRun(ev.step);
          if (run) run.replayed = true;
          break;
        }
        case EVENT.stepExit: {
          const run = this.#endingRun(ev.step, hint, exited);
          if (!run) break;
          exited.add(run.id);
          this.#runs.delete(run.id);
          out.push(this.#stepSpan(run, t, str(ctx.status) ?? 'ok', ev.error));
          break;
        }
        case EVENT.commandIssued: {
          const seq = num(ctx.seq);
          if (seq === null) break;
          const run = (hint?.pending[keyOf(seq)]?.run ?? null) as number | null;
          this.#commands.set(seq, { seq, step: ev.step, run: run ?? this.#latestRun(ev.step)?.id ?? null, loopIndex: num(ctx.loop_index), startMs: t, claimAttempt: 1, workerId: null, marks: [] });
          break;
        }
        case EVENT.commandClaimed: {
          const cmd = this.#commands.get(num(ctx.seq) ?? -1);
          if (!cmd) break;
          cmd.claimAttempt = num(ctx.attempt) ?? cmd.claimAttempt;
          cmd.workerId = str(ctx.worker_id);
          const claimedAt = str(ctx.claimed_at) ? Date.parse(String(ctx.claimed_at)) : NaN;
          cmd.marks.push({ name: 'claimed', timeMs: Number.isFinite(claimedAt) ? claimedAt : t, attributes: { 'svc.command.attempt': cmd.claimAttempt } });
          break;
        }
        case EVENT.commandStarted:
          this.#commands.get(num(ctx.seq) ?? -1)?.marks.push({ name: 'started', timeMs: t });
          break;
        case EVENT.callAttempt:
        case EVENT.callDone:
        case EVENT.callError:
          this.#attempt(ev, ctx, t, out);
          break;
        case EVENT.commandCompleted:
        case EVENT.commandFailed: {
          const seq = num(ctx.seq);
          const cmd = seq === null ? undefined : this.#commands.get(seq);
          if (!cmd) break;
          this.#commands.delete(cmd.seq);
          const failed = ev.event_type === EVENT.commandFailed;
          const task = isObject(ev.error) ? str(ev.error.task) : null;
          out.push(this.#commandSpan(cmd, t, failed ? 'failed' : 'completed', failed ? (codeOf(ev.error) ?? 'failed') : null, task ? { 'svc.error.task': task } : {}));
          break;
        }
        case EVENT.commandCancelled:
          for (const seq of Array.isArray(ctx.seqs) ? ctx.seqs : []) {
            const cmd = this.#commands.get(Number(seq));
            if (!cmd) continue;
            this.#commands.delete(cmd.seq);
            out.push(this.#commandSpan(cmd, t, 'cancelled', null, {}));
          }
          break;
        case EVENT.childStarted: {
          const seq = num(ctx.seq);
          if (seq === null) break;
          const run = (hint?.pending[keyOf(seq)]?.run ?? null) as number | null;
          this.#children.set(seq, { seq, step: ev.step, run: run ?? this.#latestRun(ev.step)?.id ?? null, task: str(ctx.task) ?? '', attempt: num(ctx.attempt) ?? 1, loopIndex: num(ctx.loop_index), path: str(ctx.path) ?? '', childId: num(ctx.child_execution_id) ?? 0, startMs: t });
          break;
        }
        case EVENT.childFinished: {
          const seq = num(ctx.seq);
          const call = seq === null ? undefined : this.#children.get(seq);
          if (!call) break;
          this.#children.delete(call.seq);
          const status = str(ctx.status) ?? 'completed';
          out.push(this.#childSpan(call, t, status, status === 'completed' ? null : (codeOf(ev.error) ?? status)));
          break;
        }
        case EVENT.executionQueued:
          this.#marks.push({ name: 'queued', timeMs: t });
          break;
        case EVENT.executionAdmitted:
          if (this.#queuedMs === null && this.#startMs !== null) this.#queuedMs = Math.max(0, t - this.#startMs);
          this.#marks.push({ name: 'admitted', timeMs: t });
          break;
        case EVENT.executionPaused:
          this.#pausedSince ??= t;
          this.#marks.push({ name: 'paused', timeMs: t });
          break;
        case EVENT.executionResumed:
          this.#endPause(t);
          this.#marks.push({ name: 'resumed', timeMs: t });
          break;
        case EVENT.playbookCompleted:
        case EVENT.playbookFailed:
        case EVENT.executionCancelled:
          this.#end(ev, t, out);
          break;
      }
    }
  }

  /**
   * The seqs of commands `events` cancel (command.cancelled, or the execution's cancel) that are
   * open here with no claim seen: a worker reports its claim with its first report, which for a
   * long task is its end, so one may have held them. The cancel leaves that claim on the row.
   */
  unclaimedCancelled(events: readonly CommittedEvent[]): number[] {
    const out = new Set<number>();
    const open = (seq: number) => {
      const cmd = this.#commands.get(seq);
      if (cmd && cmd.workerId === null) out.add(seq);
    };
    for (const ev of events) {
      const ctx = isObject(ev.context) ? ev.context : {};
      if (ev.event_type === EVENT.commandCancelled) for (const seq of Array.isArray(ctx.seqs) ? ctx.seqs : []) open(Number(seq));
      else if (ev.event_type === EVENT.executionCancelled) for (const seq of this.#commands.keys()) open(seq);
    }
    return [...out];
  }

  /** A claim read from its command's row at the cancel (unclaimedCancelled): the command's span names its worker, attempt and claim time. */
  claimedOnRow(claim: RowClaim): void {
    const cmd = this.#commands.get(claim.seq);
    if (!cmd || cmd.workerId !== null || claim.worker_id === null) return;
    cmd.workerId = claim.worker_id;
    cmd.claimAttempt = claim.attempt;
    const at = claim.claimed_at === null ? NaN : Date.parse(claim.claimed_at);
    cmd.marks.push({ name: 'claimed', timeMs: Number.isFinite(at) ? at : cmd.startMs, attributes: { 'svc.command.attempt': claim.attempt } });
  }

  #started(ctx: Record<string, unknown>, t: number): void {
    this.#startMs = t;
    const input = isObject(ctx.input) ? ctx.input : {};
    const parent = num(input.parentExecutionId);
    const seq = num(input.parentSeq);
    const root = num(input.rootExecutionId);
    if (root !== null && root !== this.root) {
      this.root = root;
      this.#traceId = traceIdOf(this.#salt, root);
    }
    if (typeof input.path === 'string') this.path = input.path;
    if (parent !== null && seq !== null) this.parent = { executionId: parent, seq };
    const a: Attributes = {};
    const trigger = isObject(ctx.trigger) ? str(ctx.trigger.name) : null;
    if (trigger) a['svc.trigger.name'] = trigger;
    const retryOf = num(ctx.retry_of);
    if (retryOf !== null) a['svc.retry_of.execution.id'] = retryOf;
    const resumedFrom = num(ctx.resumed_from);
    if (resumedFrom !== null) a['svc.resumed_from.execution.id'] = resumedFrom;
    this.#startAttributes = a;
  }

  /** A task's attempt: `call.attempt` (one that failed and was tried again; `at` its start) or the last one, `call.done`/`call.error` (`at` the task's start). */
  #attempt(ev: CommittedEvent, ctx: Record<string, unknown>, t: number, out: SpanRecord[]): void {
    const seq = num(ctx.seq);
    const task = str(ctx.task);
    if (seq === null || task === null) return;
    const cmd = this.#commands.get(seq);
    const duration = Math.max(0, num(ctx.duration_ms) ?? 0);
    const reported = typeof ctx.at === 'string';
    let attempt: number;
    let startMs: number;
    let endMs: number;
    if (ev.event_type === EVENT.callAttempt) {
      attempt = num(ctx.attempt) ?? 1;
      startMs = reported ? t : t - duration;
      endMs = startMs + duration;
    } else {
      attempt = num(ctx.attempts) ?? 1;
      endMs = reported ? t + duration : t;
      startMs = endMs - Math.max(0, num(ctx.attempt_ms) ?? duration);
    }
    const claimAttempt = cmd?.claimAttempt ?? 1;
    const kind = str(ctx.kind) ?? '';
    const failed = ev.event_type !== EVENT.callDone;
    out.push({
      traceId: this.#traceId,
      spanId: taskAttemptSpanId(this.#salt, this.id, seq, claimAttempt, task, attempt),
      parentSpanId: commandSpanId(this.#salt, this.id, seq),
      name: `task ${task}`,
      kind: kind === 'http' ? 'client' : 'internal',
      startMs,
      endMs,
      attributes: {
        ...this.#base(ev.step ?? cmd?.step ?? null),
        'svc.command.seq': seq,
        'svc.command.attempt': claimAttempt,
        'svc.task': task,
        'svc.task.kind': kind,
        'svc.task.attempt': attempt,
        'svc.status': failed ? 'error' : 'ok',
        ...(failed ? { 'error.type': codeOf(ev.error) ?? 'error' } : {}),
      },
      error: failed ? (codeOf(ev.error) ?? 'error') : null,
      events: [],
    });
  }

  /** A pause ends (resumed, or the execution ended while paused): its time counts. */
  #endPause(t: number): void {
    if (this.#pausedSince === null) return;
    this.#pausedMs += Math.max(0, t - this.#pausedSince);
    this.#pausedSince = null;
  }

  /** The execution ended: what is still open ends with it (cancelled), then the execution's own span. */
  #end(ev: CommittedEvent, t: number, out: SpanRecord[]): void {
    for (const cmd of this.#commands.values()) out.push(this.#commandSpan(cmd, t, 'cancelled', null, {}));
    for (const call of this.#children.values()) out.push(this.#childSpan(call, t, 'cancelled', null));
    for (const run of this.#runs.values()) out.push(this.#stepSpan(run, t, 'cancelled', null));
    this.#commands.clear();
    this.#children.clear();
    this.#runs.clear();
    this.ended = true;
    this.#endPause(t);
    const status = ev.event_type === EVENT.playbookCompleted ? 'completed' : ev.event_type === EVENT.playbookFailed ? 'failed' : 'cancelled';
    const failed = status === 'failed';
    const step = isObject(ev.error) ? str(ev.error.step) : null;
    out.push({
      traceId: this.#traceId,
      spanId: executionSpanId(this.#salt, this.id),
      parentSpanId: this.parent ? childCallSpanId(this.#salt, this.parent.executionId, this.parent.seq) : null,
      name: `playbook ${this.path}`,
      kind: 'internal',
      startMs: this.#startMs ?? t,
      endMs: t,
      attributes: {
        ...this.#base(null),
        ...this.#startAttributes,
        'svc.root_execution.id': this.root,
        ...(this.parent ? { 'svc.parent_execution.id': this.parent.executionId } : {}),
        'svc.execution.status': status,
        ...(failed ? { 'error.type': codeOf(ev.error) ?? 'failed' } : {}),
        ...(failed && step ? { 'svc.error.step': step } : {}),
        ...(this.#pausedMs > 0 ? { 'svc.execution.paused_ms': this.#pausedMs } : {}),
        ...(this.#queuedMs === null ? {} : { 'svc.execution.queued_ms': this.#queuedMs }),
      },
      error: failed ? (codeOf(ev.error) ?? 'failed') : null,
      events: this.#marks,
    });
  }

  #stepSpan(run: Run, t: number, status: string, error: unknown): SpanRecord {
    const failed = status === 'error' || status === 'timeout';
    return {
      traceId: this.#traceId,
      spanId: stepRunSpanId(this.#salt, this.id, run.id),
      parentSpanId: executionSpanId(this.#salt, this.id),
      name: `step ${run.step}`,
      kind: 'internal',
      startMs: run.startMs,
      endMs: t,
      attributes: {
        ...this.#base(run.step),
        'svc.step.run': run.id,
        'svc.step.status': status,
        ...(run.replayed ? { 'svc.step.replayed': true } : {}),
        ...(failed ? { 'error.type': codeOf(error) ?? status } : {}),
      },
      error: failed ? (codeOf(error) ?? status) : null,
      events: [],
    };
  }

  #commandSpan(cmd: Command, t: number, status: string, error: string | null, extra: Attributes): SpanRecord {
    return {
      traceId: this.#traceId,
      spanId: commandSpanId(this.#salt, this.id, cmd.seq),
      parentSpanId: cmd.run === null ? executionSpanId(this.#salt, this.id) : stepRunSpanId(this.#salt, this.id, cmd.run),
      name: `command ${cmd.step ?? ''}`.trim(),
      kind: 'internal',
      startMs: cmd.startMs,
      endMs: t,
      attributes: {
        ...this.#base(cmd.step),
        'svc.command.seq': cmd.seq,
        'svc.command.attempt': cmd.claimAttempt,
        'svc.command.status': status,
        ...(cmd.loopIndex !== null ? { 'svc.loop.index': cmd.loopIndex } : {}),
        ...(cmd.workerId ? { 'svc.worker.id': cmd.workerId } : {}),
        ...(error ? { 'error.type': error } : {}),
        ...extra,
      },
      error,
      events: cmd.marks,
    };
  }

  #childSpan(call: ChildCall, t: number, status: string, error: string | null): SpanRecord {
    return {
      traceId: this.#traceId,
      spanId: childCallSpanId(this.#salt, this.id, call.seq),
      parentSpanId: call.run === null ? executionSpanId(this.#salt, this.id) : stepRunSpanId(this.#salt, this.id, call.run),
      name: `task ${call.task}`,
      kind: 'internal',
      startMs: call.startMs,
      endMs: t,
      attributes: {
        ...this.#base(call.step),
        'svc.command.seq': call.seq,
        'svc.task': call.task,
        'svc.task.kind': 'playbook',
        // A retried playbook task starts a child per attempt (child.started's `attempt`; none on the first).
        'svc.task.attempt': call.attempt,
        // A loop of playbook tasks starts a child per item, as a loop of worker tasks a command per item.
        ...(call.loopIndex !== null ? { 'svc.loop.index': call.loopIndex } : {}),
        'svc.child.execution.id': call.childId,
        'svc.child.playbook.path': call.path,
        'svc.status': status,
        ...(error ? { 'error.type': error } : {}),
      },
      error,
      events: [],
    };
  }

  #base(step: string | null): Attributes {
    return step ? { 'svc.execution.id': this.id, 'svc.playbook.path': this.path, 'svc.step': step } : { 'svc.execution.id': this.id, 'svc.playbook.path': this.path };
  }

  /** The newest open run of a step. */
  #latestRun(step: string | null): Run | undefined {
    let latest: Run | undefined;
    for (const r of this.#runs.values()) if (r.step === step && (!latest || r.id > latest.id)) latest = r;
    return latest;
  }

  /**
   * The run a `step.exit` ends: the step's oldest open run that the machine no longer holds (with a
   * hint; the machine ends the oldest ended run first), else its oldest open run.
   */
  #endingRun(step: string | null, hint: Hint, exited: Set<number>): Run | undefined {
    let pick: Run | undefined;
    for (const r of this.#runs.values()) {
      if (r.step !== step || exited.has(r.id)) continue;
      if (hint && Object.hasOwn(hint.runs, keyOf(r.id))) continue;
      if (!pick || r.id < pick.id) pick = r;
    }
    if (pick || !hint) return pick;
    return this.#endingRun(step, null, exited);
  }
}
