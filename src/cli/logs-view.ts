import { setTimeout as sleep } from 'node:timers/promises';
import * as v from 'valibot';
import { EVENT } from '../../machines/event-types.ts';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import type { Out } from './api-command.ts';
import { LOG_DETAIL_CHARS } from './executions-usage.ts';
import { formatElapsed } from './progress-view.ts';
import { ServerUnreachableError, type ExecutionEvent, type ExecutionStatus, type RunApi } from './run-api.ts';
import { UNREACHABLE_GRACE_MS } from './watch-execution.ts';
import { taskTimerText } from './task-timer-text.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { padColumns, printableText, textWidth } from './text-width.ts';

// `svc logs`: an execution's events as a timeline, one line each, with the time since the start
// and since the event before, and what a reader looks for in each (a task's result or error, a
// step's outcome, a cancel's reason). Columns have fixed widths so that `--follow` can print a
// line as it comes, aligned with the lines before it.

/** How often `--follow` asks for new events while nothing happens. */
const FOLLOW_POLL_MS = 500;
const WIDTHS = [6, 9, 9, 19, 16];
const STEP_COLUMN = 4;
const HEADER = ['ID', 'AT', 'GAP', 'EVENT', 'STEP', 'DETAIL'];

const ErrorShape = v.looseObject({ message: v.string(), code: v.optional(v.nullable(v.string())) });
const CallContext = v.looseObject({ task: v.optional(v.string()), kind: v.optional(v.string()), duration_ms: v.optional(v.number()), attempts: v.optional(v.number()), attempt: v.optional(v.number()) });
const TimedContext = v.looseObject({ at: v.optional(v.string()), claimed_at: v.optional(v.nullable(v.string())), duration_ms: v.optional(v.number()) });
const AttemptResult = v.looseObject({ output: v.unknown() });
// A command's report: each task's outcome, its data when ok (a call's own event carries none).
const CommandResult = v.looseObject({ tasks: ownKeysRecord(v.string(), v.looseObject({ status: v.string(), data: v.optional(v.unknown()), error: v.optional(v.unknown()) })) });
const FailedTask = v.looseObject({ task: v.string() });
const StartContext = v.looseObject({
  requested_by: v.optional(v.nullable(v.looseObject({ sub: v.string() }))),
  trigger: v.optional(v.nullable(v.looseObject({ name: v.string() }))),
  retry_of: v.optional(v.number()),
  from_step: v.optional(v.string()),
  resumed_from: v.optional(v.number()),
  input: v.optional(v.looseObject({ parentExecutionId: v.optional(v.nullable(v.number())) })),
});
const ReasonContext = v.looseObject({ reason: v.string() });
const ByContext = v.looseObject({ requested_by: v.looseObject({ sub: v.string() }) });
const TimerContext = v.looseObject({ wake_at: v.string(), seq: v.optional(v.number()) });
const AwaitContext = v.looseObject({ signal: v.string(), timeout_at: v.optional(v.nullable(v.string())), approval_roles: v.optional(v.nullable(v.array(v.string()))) });
const SignalContext = v.looseObject({ signal: v.string(), by: v.optional(v.nullable(v.string())), buffered: v.optional(v.boolean()) });
const StepExitContext = v.looseObject({ status: v.string() });
const ClaimContext = v.looseObject({ worker_id: v.string(), attempt: v.number() });
const CommandContext = v.looseObject({ seq: v.number(), loop_index: v.optional(v.nullable(v.number())) });
// A report that came after its command was over (the execution cancelled, the claim taken
// over): kept for the record, applied to nothing.
const LateContext = v.looseObject({ late: v.literal(true) });
// A report refused (of an attempt whose claim was taken over since, another worker's than the
// holder's, an item of a batch that failed): recorded as `command.refused` naming what it
// reported. Shown as any other type (its context, else its result) a refused completion read as
// the command completing.
const RefusedContext = v.looseObject({ reported: v.string(), refused: v.string(), attempt: v.optional(v.nullable(v.number())) });
// Flow control's queueing and admission: the limit and key (null: none), the priority, a debounce window's close.
const AdmissionContext = v.looseObject({ limit: v.optional(v.nullable(v.string())), key: v.optional(v.nullable(v.string())), priority: v.optional(v.number()), debounce_until: v.optional(v.nullable(v.string())) });
const ChildContext = v.looseObject({ seq: v.number(), child_execution_id: v.nullable(v.number()), path: v.optional(v.string()), status: v.optional(v.string()) });

/** `text` on one line, cut at `max` characters (an ellipsis says it was), its other control characters escaped. */
export function boundedText(text: string, max = LOG_DETAIL_CHARS): string {
  const line = printableText(text.replace(/\s*\n\s*/g, ' ⏎ '));
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** An error as a person reads it: `code: message` when it has them, else its JSON. */
export function errorText(error: unknown): string {
  const e = v.safeParse(ErrorShape, error);
  if (e.success) return e.output.code ? `${e.output.code}: ${e.output.message}` : e.output.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

/** A duration to the millisecond while short (`12ms`, `1.234s`), then as progress shows it (`5m03s`). */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(3)}s`;
  return formatElapsed(ms);
}

/**
 * What the line of an event says after its type and step: whatever a reader looks for in it.
 * `timerOf`: what a `playbook` task's timer set under a seq is for (its timer.fired names only the seq);
 * `replayedFrom`: the execution a retry retries (or auto-resume restarted), named by its start.
 */
function detail(e: ExecutionEvent, timerOf: (seq: number) => string | undefined, replayedFrom: number | undefined): string {
  switch (e.event_type) {
    case EVENT.executionStarted: {
      const c = v.safeParse(StartContext, e.context);
      if (!c.success) return '';
      // A child's start names its parent (svc logs PARENT follows it back), as its parent's child.started names it.
      const parent = c.output.input?.parentExecutionId;
      const parts = [parent && `child of execution ${parent}`, c.output.requested_by && `by ${c.output.requested_by.sub}`, c.output.trigger && `trigger ${c.output.trigger.name}`];
      if (c.output.retry_of !== undefined) parts.push(`retry of ${c.output.retry_of}${c.output.from_step ? ` from step ${c.output.from_step}` : ''}`);
      if (c.output.resumed_from !== undefined) parts.push(`resumed from ${c.output.resumed_from}`);
      return parts.filter(Boolean).join(', ');
    }
    case EVENT.callDone:
    case EVENT.callError: {
      const c = v.safeParse(CallContext, e.context);
      const how = c.success ? [c.output.kind, c.output.duration_ms === undefined ? undefined : durationText(c.output.duration_ms), c.output.attempts && c.output.attempts > 1 ? `${c.output.attempts} attempts` : undefined] : [];
      const task = c.success && c.output.task ? `${c.output.task} (${how.filter(Boolean).join(', ')})` : '';
      const outcome = e.event_type === EVENT.callError ? errorText(e.error) : e.result === undefined || e.result === null ? '' : JSON.stringify(e.result);
      return [task, outcome].filter(Boolean).join(': ');
    }
    case EVENT.callAttempt: {
      // A failed attempt of a retried task: its error, and what it printed or answered.
      const c = v.safeParse(CallContext, e.context);
      const task = c.success ? `${c.output.task ?? '?'} attempt ${c.output.attempt ?? '?'}${c.output.duration_ms === undefined ? '' : ` (${durationText(c.output.duration_ms)})`}` : '';
      const r = v.safeParse(AttemptResult, e.result);
      return [task, errorText(e.error), r.success ? `output ${JSON.stringify(r.output.output ?? null)}` : ''].filter(Boolean).join(': ');
    }
    case EVENT.commandCompleted: {
      // Each task's data, by name: the output a reader looks for, without the wrapper around it.
      const r = v.safeParse(CommandResult, e.result);
      if (!r.success) return JSON.stringify(e.result ?? null);
      return Object.entries(r.output.tasks).map(([name, t]) => `${name}: ${t.status === 'ok' ? JSON.stringify(t.data ?? null) : errorText(t.error)}`).join('; ');
    }
    case EVENT.commandFailed: {
      // The failed task's output (a shell's stderr, an http answer's body) says why: its last
      // attempt has no event of its own, so this line is the one place it shows.
      const failed = v.safeParse(FailedTask, e.error);
      const r = v.safeParse(CommandResult, e.result);
      const output = failed.success && r.success ? r.output.tasks[failed.output.task]?.data : undefined;
      return `${failed.success ? `${failed.output.task}: ` : ''}${errorText(e.error)}${output === undefined || output === null ? '' : `: output ${JSON.stringify(output)}`}`;
    }
    case EVENT.commandIssued:
    case EVENT.commandStarted: {
      const c = v.safeParse(CommandContext, e.context);
      if (!c.success) break;
      return `seq ${c.output.seq}${c.output.loop_index === null || c.output.loop_index === undefined ? '' : `, item ${c.output.loop_index}`}`;
    }
    case EVENT.commandClaimed: {
      const c = v.safeParse(ClaimContext, e.context);
      return c.success ? `worker ${c.output.worker_id}, attempt ${c.output.attempt}` : '';
    }
    case EVENT.stepExit: {
      const c = v.safeParse(StepExitContext, e.context);
      return `${c.success ? c.output.status : ''}${e.error ? `: ${errorText(e.error)}` : ''}`;
    }
    case EVENT.stepReplayed: {
      // Its outcome was taken from the log of the execution retried: nothing ran here. Shown as
      // any other line (its result, else its context) it read as a step that ran at that moment.
      const c = v.safeParse(StepExitContext, e.context);
      const from = replayedFrom === undefined ? 'replayed' : `replayed from execution ${replayedFrom}`;
      const outcome = e.result === undefined || e.result === null ? '' : `: ${JSON.stringify(e.result)}`;
      return `${c.success ? `${c.output.status} ` : ''}(${from}, not run here)${outcome}`;
    }
    // Who did it, then why, as a pause's line says (a cancel a parent's took along names who
    // cancelled the parent; a cleanup's, auto-resume's or a failed parent's may name no one).
    case EVENT.executionCancelled:
    case EVENT.executionPaused:
    case EVENT.executionResumed: {
      const c = v.safeParse(ByContext, e.context);
      const why = v.safeParse(ReasonContext, e.context);
      return [c.success && `by ${c.output.requested_by.sub}`, why.success && why.output.reason].filter(Boolean).join(': ');
    }
    case EVENT.timerSet:
    case EVENT.timerFired: {
      const c = v.safeParse(TimerContext, e.context);
      if (!c.success) break;
      // A playbook task's timeout or retry delay is not a step waking up.
      const task = e.event_type === EVENT.timerSet ? taskTimerText(e.context) : c.output.seq === undefined ? undefined : timerOf(c.output.seq);
      if (task) return `${task} ${e.event_type === EVENT.timerSet ? 'at' : 'was due at'} ${c.output.wake_at}`;
      return `${e.event_type === EVENT.timerSet ? 'wakes at' : 'was due at'} ${c.output.wake_at}`;
    }
    case EVENT.signalAwaited: {
      const c = v.safeParse(AwaitContext, e.context);
      if (!c.success) break;
      const roles = c.output.approval_roles?.length ? ` (roles ${c.output.approval_roles.join(', ')})` : '';
      return `signal ${c.output.signal}${roles}${c.output.timeout_at ? `, times out at ${c.output.timeout_at}` : ''}`;
    }
    case EVENT.signalReceived: {
      const c = v.safeParse(SignalContext, e.context);
      if (!c.success) break;
      const payload = e.result === undefined || e.result === null ? '' : `: ${JSON.stringify(e.result)}`;
      return `signal ${c.output.signal}${c.output.by ? ` by ${c.output.by}` : ''}${c.output.buffered ? ' (buffered)' : ''}${payload}`;
    }
    case EVENT.waitTimedOut:
      return 'no signal before the timeout';
    case EVENT.executionQueued:
    case EVENT.executionAdmitted: {
      // What it waits on or was admitted on; a debounced admission's result is the last start's
      // payload, which it runs with: after what it was admitted on, not in its place.
      const c = v.safeParse(AdmissionContext, e.context);
      if (!c.success) break;
      const { limit, key, priority, debounce_until: until } = c.output;
      const payload = e.event_type === EVENT.executionAdmitted && e.result !== undefined && e.result !== null ? `with the last start's payload ${JSON.stringify(e.result)}` : '';
      const window = e.event_type === EVENT.executionQueued && until ? `until its debounce window closes at ${until}` : '';
      return [limit ? `on limit ${limit} key ${JSON.stringify(key ?? '')}` : '', priority === undefined ? '' : `priority ${priority}`, window, payload].filter(Boolean).join(', ');
    }
    case EVENT.commandRefused: {
      const c = v.safeParse(RefusedContext, e.context);
      if (!c.success || c.output.reported === EVENT.commandRefused) break;
      const { reported, refused, attempt } = c.output;
      const what = detail({ ...e, event_type: reported }, timerOf, replayedFrom);
      return `refused, not applied (${refused}): ${reported}${attempt === null || attempt === undefined ? '' : ` of attempt ${attempt}`}${what ? `: ${what}` : ''}`;
    }
    case EVENT.childStarted:
    case EVENT.childFinished: {
      // The child's id is what a reader follows (svc logs ID), with how it ended.
      const c = v.safeParse(ChildContext, e.context);
      if (!c.success) break;
      const what = e.event_type === EVENT.childStarted ? [c.output.path, 'started'] : [c.output.status ?? 'finished'];
      // No id: the task started no child (its path not found, its args refused, nested too deep).
      const child = c.output.child_execution_id === null ? ['no child started'] : ['execution', c.output.child_execution_id, ...what];
      return `${child.filter(Boolean).join(' ')}${e.error ? `: ${errorText(e.error)}` : ''}`;
    }
  }
  // Any other type: its error, else its result, else its context.
  if (e.error !== undefined && e.error !== null) return errorText(e.error);
  if (e.result !== undefined && e.result !== null) return JSON.stringify(e.result);
  return e.context === undefined || e.context === null ? '' : JSON.stringify(e.context);
}

const line = (cells: string[], widths: readonly number[]) => `${cells.map((cell, i) => (i < widths.length ? padColumns(cell, widths[i]) : cell)).join('  ').trimEnd()}\n`;

// A task's events (`call.done`, `call.error`, `call.attempt`) carry its start as `at` and how long
// it ran (`duration_ms`): the trace draws the span from them. A timeline of moments puts the
// line at the task's end, so its gap is the task's own time, not the next event's.
const TASK_EVENTS: ReadonlySet<string> = new Set([EVENT.callDone, EVENT.callError, EVENT.callAttempt]);

/**
 * When the event happened (ms since the epoch; NaN when unknown): the worker's true time
 * (`context.at`, from its report; for a task, at its end) where it gave one, a claim's own time
 * (`claimed_at`: it is recorded with the claim's first report), else when it was stored.
 */
function trueTime(e: ExecutionEvent): number {
  const c = v.safeParse(TimedContext, e.context);
  const at = Date.parse((c.success && (c.output.at ?? c.output.claimed_at)) || e.created_at);
  return TASK_EVENTS.has(e.event_type) && c.success && c.output.at ? at + (c.output.duration_ms ?? 0) : at;
}

/** A signed time between two lines (`+12ms`, `-3ms`: true times need not follow the log's order). */
const signed = (ms: number): string => (ms < 0 ? `-${durationText(-ms)}` : `+${durationText(ms)}`);

// Reported times are whole milliseconds, each rounded apart (a task's end is its start plus its
// rounded duration, the command's end is rounded on its own): a line that far behind the one
// before is the same moment, not an earlier one.
const REPORT_ROUNDING_MS = 2;
const gapText = (ms: number): string => signed(ms < 0 && ms > -REPORT_ROUNDING_MS ? 0 : ms);

/** The timeline's lines, from the start time and the previous event's time (both updated as it goes). */
export class Timeline {
  #start: number | undefined;
  #previous: number | undefined;
  // A child's end is stored without a step (the child knows its parent's seq only): its line
  // names the step that started it, by seq.
  readonly #childSteps = new Map<number, string>();
  // What a playbook task's timer is for, by seq: its timer.fired names only the seq.
  readonly #taskTimers = new Map<number, string>();
  // Where a replayed step's outcome came from: the execution its start says it retries or resumes.
  #replayedFrom: number | undefined;

  // The STEP column fits the longest step name given (in a terminal's columns): one of 40
  // characters pushed its line's DETAIL 24 columns right of every other line's.
  readonly #widths: number[];

  /** `steps`: the names the timeline will show (the playbook's steps), so that its STEP column fits each. */
  constructor(steps: Iterable<string> = []) {
    this.#widths = [...WIDTHS];
    for (const step of steps) this.#widths[STEP_COLUMN] = Math.max(this.#widths[STEP_COLUMN], textWidth(step));
  }

  header(): string {
    return line(HEADER, this.#widths);
  }

  line(e: ExecutionEvent): string {
    const at = trueTime(e);
    this.#start ??= at;
    const since = Number.isNaN(at) || this.#start === undefined || Number.isNaN(this.#start) ? '-' : signed(at - this.#start);
    const gap = this.#previous === undefined || Number.isNaN(at) || Number.isNaN(this.#previous) ? '-' : gapText(at - this.#previous);
    this.#previous = at;
    const late = v.is(LateContext, e.context) ? 'late, not applied: ' : '';
    if (e.event_type === EVENT.executionStarted) {
      const c = v.safeParse(StartContext, e.context);
      if (c.success) this.#replayedFrom = c.output.retry_of ?? c.output.resumed_from;
    }
    if (e.event_type === EVENT.timerSet) {
      const c = v.safeParse(TimerContext, e.context);
      const task = taskTimerText(e.context);
      if (c.success && c.output.seq !== undefined && task) this.#taskTimers.set(c.output.seq, task);
    }
    return line([String(e.event_id), since, gap, e.event_type, this.#stepOf(e) ?? '-', boundedText(`${late}${detail(e, (seq) => this.#taskTimers.get(seq), this.#replayedFrom)}`)], this.#widths);
  }

  #stepOf(e: ExecutionEvent): string | null | undefined {
    if (e.event_type !== EVENT.childStarted && e.event_type !== EVENT.childFinished) return e.step;
    const c = v.safeParse(ChildContext, e.context);
    if (!c.success) return e.step;
    if (e.step) this.#childSteps.set(c.output.seq, e.step);
    return e.step ?? this.#childSteps.get(c.output.seq);
  }
}

/**
 * Prints an execution's events (every page): as a timeline, or as the API's answer with every
 * event; with `follow`, goes on printing new ones until it ends (or `signal` aborts: exit 130),
 * through a server restart (unreachable for up to UNREACHABLE_GRACE_MS, said on `err`, as
 * `svc run --wait` does). Reading the status before the events means that once it is terminal no
 * event is left unread.
 */
export async function printLogs(api: RunApi, id: number, opts: { follow: boolean; json: boolean; out: Out; err?: Out; signal: AbortSignal }): Promise<number> {
  const { out, json, signal } = opts;
  let timeline = new Timeline();
  let since = 0;
  let first = true;
  let unreachableSince: number | undefined;
  try {
    for (;;) {
      let execution: ExecutionStatus;
      let events: ExecutionEvent[];
      try {
        execution = await api.execution(id, signal);
        events = await api.eventsAfter(id, since, signal);
      } catch (err) {
        if (!opts.follow || first || !(err instanceof ServerUnreachableError) || signal.aborted) throw err;
        if (unreachableSince === undefined) {
          unreachableSince = performance.now();
          opts.err?.write(`${err.message}; still following, for up to ${UNREACHABLE_GRACE_MS / 1000}s\n`);
        } else if (performance.now() - unreachableSince > UNREACHABLE_GRACE_MS) throw err;
        await sleep(FOLLOW_POLL_MS, undefined, { signal });
        continue;
      }
      if (unreachableSince !== undefined) opts.err?.write('server reachable again\n');
      unreachableSince = undefined;
      since = events.at(-1)?.event_id ?? since;
      const ended = isTerminalExecutionStatus(execution.status);
      if (!opts.follow) {
        timeline = new Timeline(events.flatMap((e) => (e.step ? [e.step] : [])));
        if (json) out.write(`${JSON.stringify({ execution_id: id, events }, null, 2)}\n`);
        else out.write(`execution ${id} ${execution.path}: ${execution.status}\n${timeline.header()}${events.map((e) => timeline.line(e)).join('')}`);
        return 0;
      }
      if (json) out.write(events.map((e) => `${JSON.stringify(e)}\n`).join(''));
      else {
        // Followed, the steps to come are the playbook's: every one the execution's version has.
        if (first) timeline = new Timeline([...events.flatMap((e) => (e.step ? [e.step] : [])), ...Object.keys(await api.steps(id, signal).catch(() => ({})))]);
        if (first) out.write(`execution ${id} ${execution.path}: ${execution.status}${ended ? '' : ' (following; Ctrl-C stops)'}\n${timeline.header()}`);
        out.write(events.map((e) => timeline.line(e)).join(''));
        if (ended && !first) out.write(`execution ${id} ${execution.status}\n`);
      }
      first = false;
      if (ended) return 0;
      await sleep(FOLLOW_POLL_MS, undefined, { signal });
    }
  } catch (err) {
    if (signal.aborted) return 130;
    throw err;
  }
}
