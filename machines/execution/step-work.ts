import type { NormalizedPlaybook, NormalizedStep } from '../../src/dsl/parse-playbook.ts';
import { evaluateCondition, renderValue } from '../../src/dsl/render.ts';
import { attemptsOf, retryDelayMs } from '../../src/dsl/retry-delay-ms.ts';
import { CODE } from '../error-codes.ts';
import { isObject } from '../../src/objects.ts';
import { EVENT } from '../event-types.ts';
import { DEFAULT_PRIORITY, flowKey, FlowKeyError } from '../flow-key.ts';
import { errorOf } from './arcs.ts';
import { commandContext, segmentRefs } from './command-context.ts';
import { withResult } from './loop-results.ts';
import { hasRoom } from './run-summary.ts';
import { segmentsOf } from './segments.ts';
import { stepNamed } from './step-index.ts';
import type { Effect, ExecutionContext, Iteration, PendingCommand, StepRun, TaskError, TaskOutcome } from './types.ts';
import { iterationKey, keyOf, numberOf, type IterationKey } from './keys.ts';

// A step's work, pure, for the named actions of ./actions.ts: a copy-on-write draft of the
// context, issuing a run's commands (or child executions) segment by segment and item by item,
// and folding what they produced into the run.

/**
 * A working copy: maps are copied on their first write, so the snapshot given to transition() is
 * never mutated. `vars` and `steps` are replaced, never changed in place, because issued commands
 * hold references to them (what a step saw must not change later in the same transition).
 */
export class Draft {
  readonly c: ExecutionContext;
  readonly effects: Effect[] = [];
  readonly pb: NormalizedPlaybook;
  #runsOwned = false;
  #pendingOwned = false;
  // Runs already copied (or created) here: every caller then shares one object.
  #owned: StepRun[] = [];

  constructor(pb: NormalizedPlaybook, ctx: ExecutionContext) {
    this.pb = pb;
    this.c = { ...ctx };
  }

  /** The runs map, writable. */
  runs(): ExecutionContext['runs'] {
    if (!this.#runsOwned) {
      this.c.runs = { ...this.c.runs };
      this.#runsOwned = true;
    }
    return this.c.runs;
  }

  /** The pending map, writable. */
  pending(): ExecutionContext['pending'] {
    if (!this.#pendingOwned) {
      this.c.pending = { ...this.c.pending };
      this.#pendingOwned = true;
    }
    return this.c.pending;
  }

  /** The run, writable: copied on the first write here, the same object after. */
  run(id: number): StepRun {
    const r = this.c.runs[keyOf(id)];
    if (this.#owned.includes(r)) return r;
    const copy: StepRun = { ...r, iterations: { ...r.iterations }, loop: r.loop ? { ...r.loop } : null };
    this.runs()[keyOf(id)] = copy;
    this.#owned.push(copy);
    return copy;
  }

  addRun(run: StepRun): void {
    this.runs()[keyOf(run.id)] = run;
    this.#owned.push(run);
  }

  /** Whether the run is still in progress (a nested completion may have ended it). */
  live(run: StepRun): boolean {
    return this.c.runs[keyOf(run.id)] === run && !run.outcome && !this.c.finished;
  }

  step(name: string): NormalizedStep {
    return stepNamed(this.pb, name);
  }

  /**
   * Adds an effect; while paused, commands and child starts are held in the context instead
   * (issued on resume), and so is what `hold` says goes with them (a child's timeout timer).
   */
  emit(e: Effect, hold = e.type === 'issueCommand' || e.type === 'startChild'): void {
    if (this.c.paused && hold) this.c.held = [...this.c.held, e];
    else this.effects.push(e);
  }

  done(): { context: ExecutionContext; effects: Effect[] } {
    return { context: this.c, effects: this.effects };
  }
}

/** The template context seen by arcs, loop `in`, child args and (plus keychain) by workers. */
export function baseRenderContext(c: ExecutionContext): Record<string, unknown> {
  const i = c.input;
  return {
    workload: i.workload,
    args: i.args,
    vars: c.vars,
    steps: c.steps,
    execution: { id: i.executionId, path: i.path, catalog_id: i.catalogId, parent_id: i.parentExecutionId, root_id: i.rootExecutionId },
  };
}

function iterationContext(d: Draft, run: StepRun, it: Iteration): Record<string, unknown> {
  const ctx: Record<string, unknown> = { ...baseRenderContext(d.c), tasks: it.tasks };
  if (run.loop && it.index !== null) {
    const n = run.loop.items.length;
    ctx.loop = { index: it.index, length: n, first: it.index === 0, last: it.index === n - 1, item: it.item };
    ctx[run.loop.iterator] = it.item;
  }
  return ctx;
}

/** Issues the command (or child execution) for the iteration's current segment. */
function dispatchSegment(d: Draft, run: StepRun, key: IterationKey): void {
  const it = run.iterations[key];
  const step = d.step(run.step);
  const segment = segmentsOf(step)[it.segment];
  const seq = d.c.nextSeq++;
  run.iterations[key] = { ...it, seq };
  if (segment.kind === 'worker') {
    const scope = iterationContext(d, run, run.iterations[key]);
    // A limited task's key is rendered as it is issued; a key that cannot be fails the task here.
    const spec = segment.tasks[0].limit;
    let limit: { name: string; key: string } | null = null;
    if (spec) {
      const field = `${run.step}.${segment.tasks[0].name}.limit.key`;
      try {
        limit = { name: spec.name, key: flowKey(renderValue(spec.key ?? '', scope, field), field) };
      } catch (err) {
        const error = err instanceof FlowKeyError ? { message: err.message, code: err.code } : errorOf(err);
        finishIteration(d, run.id, key, { [segment.tasks[0].name]: { status: 'error', data: null, error } });
        return;
      }
    }
    d.pending()[keyOf(seq)] = { run: run.id, iteration: key, kind: 'worker' };
    d.emit({
      type: 'issueCommand',
      seq,
      step: run.step,
      loopIndex: it.index,
      priority: d.c.input.priority ?? DEFAULT_PRIORITY,
      limit,
      tasks: segment.tasks,
      context: commandContext(scope, segmentRefs(segment, d.pb.keychain)),
      keychain: d.pb.keychain,
    });
    return;
  }
  const task = segment.tasks[0];
  const ctx = iterationContext(d, run, run.iterations[key]);
  const attempt = it.attempt ?? 1;
  try {
    const path = renderValue((task as { path?: unknown }).path, ctx, `${run.step}.${task.name}.path`);
    const args = renderValue((task as { args?: unknown }).args ?? {}, ctx, `${run.step}.${task.name}.args`);
    if (typeof path !== 'string' || !path) throw new Error(`playbook task ${task.name} needs a path`);
    // A literal `args` must be a mapping (registration); a template may render to anything.
    if (!isObject(args)) throw new Error(`${run.step}.${task.name}.args must render to a mapping, got ${args === null ? 'null' : Array.isArray(args) ? 'a list' : typeof args}`);
    // A log written before playbook tasks had timers (ExecutionInput.childTaskTimers) is folded as it was written.
    const timeoutMs = d.c.input.childTaskTimers === false ? null : timeoutMsOf(task.timeout_seconds, ctx, `${run.step}.${task.name}`);
    // As on a worker, a field that does not render right fails the task without a retry.
    if (typeof timeoutMs === 'object' && timeoutMs !== null) {
      finishIteration(d, run.id, key, { [task.name]: { status: 'error', data: null, error: timeoutMs } });
      return;
    }
    d.pending()[keyOf(seq)] = { run: run.id, iteration: key, kind: 'child' };
    // Its loop item said with it: a retry's child starts with no loop.item before it.
    d.emit({ type: 'startChild', seq, step: run.step, task: task.name, path, args, ...(attempt > 1 ? { attempt } : {}), ...(it.index !== null ? { loopIndex: it.index } : {}) });
    // Its timeout is a durable timer (a row, timer.fired), issued with the start (held with it while paused).
    if (timeoutMs !== null) {
      const timer = d.c.nextSeq++;
      d.pending()[keyOf(seq)] = { run: run.id, iteration: key, kind: 'child', timer };
      d.pending()[keyOf(timer)] = { run: run.id, iteration: key, kind: 'wait', child: seq };
      d.emit({ type: 'wait', seq: timer, step: run.step, kind: 'timer', signal: null, wakeAt: null, afterMs: timeoutMs, roles: null, purpose: { task: task.name, for: 'timeout', attempt } }, true);
    }
  } catch (err) {
    // A bad path or args template fails this task right here, as a worker would report it (no retry).
    finishIteration(d, run.id, key, { [task.name]: { status: 'error', data: null, error: errorOf(err) } });
  }
}

// The longest timeout or retry delay a timer takes (~317 years): its wake-up time stays a date the row holds.
const MAX_TIMER_MS = 1e13;

/**
 * A `playbook` task's `timeout_seconds` rendered (a template too) in ms; null when it has none;
 * what the worker answers for a value that is no number > 0 (invalid_task) otherwise.
 */
function timeoutMsOf(value: unknown, ctx: Record<string, unknown>, field: string): number | null | TaskError {
  if (value === undefined || value === null) return null;
  const rendered = renderValue(value, ctx, `${field}.timeout_seconds`);
  if (rendered === undefined || rendered === null) return null;
  if (typeof rendered !== 'number' || !(rendered > 0) || Number.isNaN(rendered)) return { message: 'invalid playbook task: timeout_seconds: expected a number > 0', code: CODE.invalid_task };
  return Math.min(rendered * 1000, MAX_TIMER_MS);
}

/**
 * The child of a `playbook` task ended (child.finished under the seq `p` was pending for): the
 * timer bounding it ends, and the attempt is settled with `outcome` (retried or final).
 */
export function endChildAttempt(d: Draft, p: PendingCommand, outcome: TaskOutcome): void {
  if (p.timer !== undefined && Object.hasOwn(d.c.pending, keyOf(p.timer))) {
    delete d.pending()[keyOf(p.timer)];
    d.emit({ type: 'endWaits', seqs: [p.timer] });
  }
  settleAttempt(d, p.run, p.iteration, outcome);
}

/**
 * timer.fired under `seq`, when it is a `playbook` task's timer (false otherwise: a step's wait):
 * a retry's delay is over, its next attempt starts a new child; a timeout cancels the child and
 * the attempt fails with code `timeout` (retried like any failure when its `retry` says so).
 */
export function taskTimerFired(d: Draft, seq: number): boolean {
  const p = d.c.pending[keyOf(seq)];
  if (p?.kind !== 'wait' || (p.child === undefined && !p.retry)) return false;
  delete d.pending()[keyOf(seq)];
  d.emit({ type: 'endWaits', seqs: [seq] });
  const run = d.run(p.run);
  if (p.retry) {
    dispatchSegment(d, run, p.iteration);
    return true;
  }
  const task = segmentsOf(d.step(run.step))[run.iterations[p.iteration].segment].tasks[0];
  // A templated value is not rendered again (what it reads may have changed since): named, not given.
  const limit = typeof task.timeout_seconds === 'number' ? ` (${task.timeout_seconds} s)` : '';
  const message = `playbook task ${run.step}.${task.name}: its child did not end within timeout_seconds${limit}`;
  if (p.child !== undefined && Object.hasOwn(d.c.pending, keyOf(p.child))) {
    delete d.pending()[keyOf(p.child)];
    d.emit({ type: 'cancelChild', seq: p.child, reason: `${message}; cancelled by parent execution ${d.c.input.executionId}` });
  }
  settleAttempt(d, run.id, p.iteration, { status: 'error', data: null, error: { message, code: CODE.timeout } });
  return true;
}

/**
 * A `playbook` task's attempt ended with `outcome`: a failure with attempts left whose
 * `retry.when` holds (over the iteration's scope and `outcome`, as the worker's does) starts the
 * next attempt after the worker's delay (a durable timer; at once when it is 0); otherwise the
 * outcome is the task's. A `retry.when` that fails to render fails the task with template_error.
 */
function settleAttempt(d: Draft, runId: number, key: IterationKey, outcome: TaskOutcome): void {
  const run = d.run(runId);
  const it = run.iterations[key];
  const task = segmentsOf(d.step(run.step))[it.segment].tasks[0];
  const attempt = it.attempt ?? 1;
  if (outcome.status === 'error' && !d.c.finished && d.c.input.childTaskTimers !== false && attempt < attemptsOf(task.retry)) {
    let again = true;
    const when = task.retry.when;
    if (when) {
      try {
        again = evaluateCondition(when, { ...iterationContext(d, run, it), outcome }, `${run.step}.${task.name}.retry.when`);
      } catch (err) {
        finishIteration(d, runId, key, { [task.name]: { ...outcome, error: { message: err instanceof Error ? err.message : String(err), code: CODE.template_error } } });
        return;
      }
    }
    if (again) {
      const ms = Math.min(retryDelayMs(task.retry, attempt), MAX_TIMER_MS);
      run.iterations[key] = { ...it, attempt: attempt + 1 };
      if (ms <= 0) {
        dispatchSegment(d, run, key);
        return;
      }
      const timer = d.c.nextSeq++;
      run.iterations[key] = { ...it, attempt: attempt + 1, seq: timer };
      d.pending()[keyOf(timer)] = { run: run.id, iteration: key, kind: 'wait', retry: true };
      d.emit({ type: 'wait', seq: timer, step: run.step, kind: 'timer', signal: null, wakeAt: null, afterMs: ms, roles: null, purpose: { task: task.name, for: 'retry', attempt: attempt + 1 } });
      return;
    }
  }
  finishIteration(d, runId, key, { [task.name]: outcome });
}

/** Starts one iteration of a run (a loop item, or `index` null for a plain step): records loop.item, issues its first segment. */
export function launchIteration(d: Draft, run: StepRun, index: number | null): void {
  const key = iterationKey(index);
  const it: Iteration = { index, segment: 0, tasks: {}, seq: 0 };
  if (run.loop && index !== null) {
    it.item = run.loop.items[index];
    d.emit({ type: 'record', eventType: EVENT.loopItem, step: run.step, context: { index } });
  }
  run.iterations[key] = it;
  dispatchSegment(d, run, key);
}

/** Launches loop items while the loop has room (max_in_flight; one at a time when sequential). */
export function fillLoop(d: Draft, run: StepRun): void {
  while (d.live(run) && hasRoom(run)) launchIteration(d, run, run.loop!.next++);
}

/**
 * The outcome of a run's tasks, read in tool order: key order is not kept by a snapshot
 * stored as jsonb (keys come back sorted), so it must not decide which task was last.
 */
function outcomeOf(step: NormalizedStep, tasks: Record<string, TaskOutcome>): { status: 'ok' | 'error'; result: unknown; error: TaskError | null } {
  const list = step.tasks.filter((t) => Object.hasOwn(tasks, t.name)).map((t) => tasks[t.name]);
  const failed = list.find((t) => t.status === 'error');
  const last = list.at(-1);
  return { status: failed ? 'error' : 'ok', result: failed ? (failed.data ?? null) : (last?.data ?? null), error: failed?.error ?? null };
}

/**
 * Folds the tasks a segment produced into its iteration: issues the next segment, or ends the
 * iteration (a plain run then has its outcome; a loop counts the item and keeps its result).
 */
export function finishIteration(d: Draft, runId: number, key: IterationKey, tasks: Record<string, TaskOutcome>): void {
  const run = d.run(runId);
  const it = { ...run.iterations[key], tasks: { ...run.iterations[key].tasks, ...tasks } };
  run.iterations[key] = it;
  const step = d.step(run.step);
  const o = outcomeOf(step, it.tasks);
  if (o.status === 'ok' && it.segment + 1 < segmentsOf(step).length) {
    run.iterations[key] = { ...it, segment: it.segment + 1 };
    dispatchSegment(d, run, key);
    return;
  }
  delete run.iterations[key];
  run.lastTasks = it.tasks;
  if (!run.loop) {
    run.outcome = { ...o, tasks: it.tasks };
    return;
  }
  const loop = run.loop;
  loop.results = withResult(loop.results, it.index!, o.status === 'ok' ? o.result : null);
  loop.done++;
  if (o.status === 'error' && !loop.failed) loop.failed = { message: `item ${it.index}: ${o.error?.message ?? 'failed'}`, code: o.error?.code };
}

/** Ends the execution failed (the first failure wins); `failing` then settles it. */
export function fail(d: Draft, error: TaskError, step: string): void {
  if (d.c.finished) return;
  d.c.finished = { status: 'failed', result: null, error: { ...error, step } };
}

/**
 * Cancels what is in flight (worker commands, child executions unless `cascade` is false) and
 * forgets the runs; what was held while paused was never issued and is dropped; its waits end
 * (a cancelled execution's timers never fire). `requestedBy`: who asked for the cancel, whose
 * children's cancels then say so.
 */
export function stopInFlight(d: Draft, cascade = true, requestedBy?: Record<string, unknown>): void {
  const held = new Set(d.c.held.flatMap((e) => ('seq' in e ? [e.seq] : [])));
  const seqs = Object.entries(d.c.pending).filter(([s, p]) => p.kind === 'worker' && !held.has(numberOf(s))).map(([s]) => numberOf(s));
  if (seqs.length) d.emit({ type: 'cancelCommands', seqs });
  // A `playbook` task's timeout timer held with its child's start was never set either.
  const waits = Object.entries(d.c.pending).filter(([s, p]) => p.kind === 'wait' && !held.has(numberOf(s))).map(([s]) => numberOf(s));
  if (waits.length) d.emit({ type: 'endWaits', seqs: waits });
  if (cascade && Object.entries(d.c.pending).some(([s, p]) => p.kind === 'child' && !held.has(numberOf(s)))) d.emit({ type: 'cancelChildren', ...(requestedBy ? { requestedBy } : {}) });
  d.c.pending = {};
  d.c.runs = {};
  d.c.routes = [];
  d.c.held = [];
}

