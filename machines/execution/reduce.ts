import type { NormalizedPlaybook, NormalizedStep } from '../../src/dsl/parse-playbook.ts';
import { evaluateCondition, renderValue } from '../../src/dsl/render.ts';
import { commandContext, segmentRefs } from './command-context.ts';
import { segmentsOf } from './segments.ts';
import type {
  Effect,
  ExecutionContext,
  ExecutionEvent,
  ExecutionInput,
  Iteration,
  StepOutcome,
  StepRun,
  TaskError,
  TaskOutcome,
} from './types.ts';

export type Reduction = { context: ExecutionContext; effects: Effect[] };

// A cycle of task-less steps would otherwise spin forever inside one transition.
const MAX_IMMEDIATE_STEPS_PER_EVENT = 1000;

/** The context of a new execution (nothing started yet). */
export function initialContext(input: ExecutionInput): ExecutionContext {
  return {
    input,
    vars: {},
    steps: {},
    runs: {},
    pending: {},
    nextSeq: 1,
    nextRun: 1,
    completedSteps: [],
    lastResult: null,
    finished: null,
  };
}

/**
 * A working copy: maps are copied on write so the snapshot given to transition() is never
 * mutated. `vars` and `steps` are replaced, never changed in place, because issued commands
 * hold references to them (what a step saw must not change later in the same transition).
 */
class Draft {
  readonly c: ExecutionContext;
  readonly effects: Effect[] = [];
  immediate = 0;
  readonly pb: NormalizedPlaybook;
  // Runs already copied (or created) in this transition: every caller then shares one object.
  readonly #owned = new Set<StepRun>();

  constructor(pb: NormalizedPlaybook, ctx: ExecutionContext) {
    this.pb = pb;
    this.c = { ...ctx, runs: { ...ctx.runs }, pending: { ...ctx.pending }, completedSteps: [...ctx.completedSteps] };
  }

  /** The run, writable: copied on the first write in this transition, the same object after. */
  run(id: number): StepRun {
    const r = this.c.runs[id];
    if (this.#owned.has(r)) return r;
    const copy: StepRun = { ...r, iterations: { ...r.iterations }, loop: r.loop ? { ...r.loop, results: [...r.loop.results] } : null };
    this.c.runs[id] = copy;
    this.#owned.add(copy);
    return copy;
  }

  /** Adds a run created in this transition. */
  addRun(run: StepRun): void {
    this.c.runs[run.id] = run;
    this.#owned.add(run);
  }

  /** Whether the run is still in progress (a nested completion may have ended it). */
  live(run: StepRun): boolean {
    return this.c.runs[run.id] === run && !this.c.finished;
  }

  step(name: string): NormalizedStep {
    const s = this.pb.workflow.find((w) => w.step === name);
    if (!s) throw new Error(`unknown step ${name}`);
    return s;
  }

  emit(e: Effect): void {
    this.effects.push(e);
  }

  done(): Reduction {
    return { context: this.c, effects: this.effects };
  }
}

function errorOf(err: unknown): TaskError {
  if (err instanceof Error) return { message: err.message, code: err.name === 'TemplateError' ? 'template_error' : 'error' };
  return { message: String(err), code: 'error' };
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
function dispatchSegment(d: Draft, run: StepRun, key: string): void {
  const it = run.iterations[key];
  const step = d.step(run.step);
  const segment = segmentsOf(step)[it.segment];
  const seq = d.c.nextSeq++;
  run.iterations[key] = { ...it, seq };
  if (segment.kind === 'worker') {
    d.c.pending[seq] = { run: run.id, iteration: key, kind: 'worker' };
    d.emit({
      type: 'issueCommand',
      seq,
      step: run.step,
      loopIndex: it.index,
      tasks: segment.tasks,
      context: commandContext(iterationContext(d, run, run.iterations[key]), segmentRefs(segment)),
      keychain: d.pb.keychain,
    });
    return;
  }
  const task = segment.tasks[0];
  const ctx = iterationContext(d, run, run.iterations[key]);
  try {
    const path = renderValue((task as { path?: unknown }).path, ctx, `${run.step}.${task.name}.path`);
    const args = renderValue((task as { args?: unknown }).args ?? {}, ctx, `${run.step}.${task.name}.args`);
    if (typeof path !== 'string' || !path) throw new Error(`playbook task ${task.name} needs a path`);
    const argsObject = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
    d.c.pending[seq] = { run: run.id, iteration: key, kind: 'child' };
    d.emit({ type: 'startChild', seq, step: run.step, task: task.name, path, args: argsObject });
  } catch (err) {
    // A bad path or args template fails this task right here, as a worker would report it.
    finishIteration(d, run.id, key, { [task.name]: { status: 'error', data: null, error: errorOf(err) } });
  }
}

function launchIteration(d: Draft, run: StepRun, index: number | null): void {
  const key = index === null ? '-' : String(index);
  const it: Iteration = { index, segment: 0, tasks: {}, seq: 0 };
  if (run.loop && index !== null) {
    it.item = run.loop.items[index];
    d.emit({ type: 'record', eventType: 'loop.item', step: run.step, context: { index } });
  }
  run.iterations[key] = it;
  dispatchSegment(d, run, key);
}

function fillLoop(d: Draft, run: StepRun): void {
  const loop = run.loop!;
  const limit = loop.parallel ? loop.maxInFlight : 1;
  while (d.live(run) && !loop.failed && loop.next < loop.items.length && Object.keys(run.iterations).length < limit) {
    launchIteration(d, run, loop.next++);
  }
}

function startStep(d: Draft, name: string): void {
  if (++d.immediate > MAX_IMMEDIATE_STEPS_PER_EVENT) {
    fail(d, { message: `more than ${MAX_IMMEDIATE_STEPS_PER_EVENT} steps entered without running a task; is there a cycle of steps without tools?`, code: 'step_cycle' }, name);
    return;
  }
  const step = d.step(name);
  const id = d.c.nextRun++;
  const run: StepRun = { id, step: name, loop: null, iterations: {}, lastTasks: {} };
  d.addRun(run);
  d.emit({ type: 'record', eventType: 'step.enter', step: name });
  if (step.tasks.length === 0) {
    completeRun(d, id, { status: 'ok', result: null, error: null, tasks: {} });
    return;
  }
  if (step.loop) {
    let items: unknown;
    try {
      items = renderValue(step.loop.in, baseRenderContext(d.c), `${name}.loop.in`);
    } catch (err) {
      completeRun(d, id, { status: 'error', result: null, error: errorOf(err), tasks: {} });
      return;
    }
    if (!Array.isArray(items)) {
      completeRun(d, id, { status: 'error', result: null, error: { message: `${name}.loop.in must render to a list`, code: 'loop_input' }, tasks: {} });
      return;
    }
    run.loop = {
      items,
      iterator: step.loop.iterator ?? 'item',
      parallel: step.loop.mode === 'parallel',
      maxInFlight: step.loop.max_in_flight ?? (step.loop.mode === 'parallel' ? items.length || 1 : 1),
      next: 0,
      done: 0,
      results: new Array(items.length).fill(null),
      failed: null,
    };
    if (items.length === 0) {
      d.emit({ type: 'record', eventType: 'loop.done', step: name, context: { count: 0 } });
      completeRun(d, id, { status: 'ok', result: [], error: null, tasks: {} });
      return;
    }
    fillLoop(d, run);
    return;
  }
  launchIteration(d, run, null);
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

/** Folds the tasks a segment produced into its iteration; moves on to the next segment or finishes. */
function finishIteration(d: Draft, runId: number, key: string, tasks: Record<string, TaskOutcome>): void {
  const run = d.run(runId);
  const it = { ...run.iterations[key], tasks: { ...run.iterations[key].tasks, ...tasks } };
  run.iterations[key] = it;
  const step = d.step(run.step);
  const o = outcomeOf(step, it.tasks);
  const segments = segmentsOf(step);
  if (o.status === 'ok' && it.segment + 1 < segments.length) {
    run.iterations[key] = { ...it, segment: it.segment + 1 };
    dispatchSegment(d, run, key);
    return;
  }
  delete run.iterations[key];
  run.lastTasks = it.tasks;
  if (!run.loop) {
    completeRun(d, runId, { ...o, tasks: it.tasks });
    return;
  }
  const loop = run.loop;
  loop.results[it.index!] = o.status === 'ok' ? o.result : null;
  loop.done++;
  if (o.status === 'error' && !loop.failed) loop.failed = { message: `item ${it.index}: ${o.error?.message ?? 'failed'}`, code: o.error?.code };
  fillLoop(d, run);
  if (Object.keys(run.iterations).length > 0) return;
  if (loop.failed || loop.done === loop.items.length) {
    d.emit({ type: 'record', eventType: 'loop.done', step: run.step, context: { count: loop.done, failed: Boolean(loop.failed) } });
    completeRun(d, runId, {
      status: loop.failed ? 'error' : 'ok',
      result: loop.results,
      error: loop.failed,
      tasks: run.lastTasks,
    });
  }
}

/** A step run is over: record its outcome, then follow `next`. */
function completeRun(d: Draft, runId: number, outcome: StepOutcome): void {
  const run = d.c.runs[runId];
  delete d.c.runs[runId];
  d.c.steps = { ...d.c.steps, [run.step]: outcome };
  if (!d.c.completedSteps.includes(run.step)) d.c.completedSteps.push(run.step);
  d.c.lastResult = outcome.result;
  d.emit({
    type: 'record',
    eventType: 'step.exit',
    step: run.step,
    context: { status: outcome.status },
    result: outcome.status === 'ok' ? outcome.result : undefined,
    error: outcome.error ?? undefined,
  });
  if (d.c.finished) return;
  const step = d.step(run.step);
  const ctx = { ...baseRenderContext(d.c), outcome };
  const targets: string[] = [];
  try {
    for (const [i, arc] of step.next.arcs.entries()) {
      const fires = arc.when === undefined ? outcome.status === 'ok' : evaluateCondition(arc.when, ctx, `${run.step}.next[${i}].when`);
      if (!fires) continue;
      if (arc.set) {
        const values = renderValue(arc.set, ctx, `${run.step}.next[${i}].set`);
        if (values && typeof values === 'object') d.c.vars = { ...d.c.vars, ...values };
      }
      targets.push(arc.step);
      if (step.next.mode === 'exclusive') break;
    }
  } catch (err) {
    fail(d, errorOf(err), run.step);
    return;
  }
  if (targets.length === 0 && outcome.status === 'error') {
    fail(d, outcome.error ?? { message: `step ${run.step} failed` }, run.step);
    return;
  }
  for (const t of targets) {
    if (d.c.finished) return;
    startStep(d, t);
  }
}

function fail(d: Draft, error: TaskError, step: string): void {
  if (d.c.finished) return;
  d.c.finished = { status: 'failed', result: null, error: { ...error, step } };
}

/** After any event: a failure stops what is still in flight; nothing left running means success. */
function settle(d: Draft): void {
  const f = d.c.finished;
  if (f) {
    const seqs = Object.entries(d.c.pending).filter(([, p]) => p.kind === 'worker').map(([s]) => Number(s));
    if (seqs.length) d.emit({ type: 'cancelCommands', seqs });
    if (Object.values(d.c.pending).some((p) => p.kind === 'child')) d.emit({ type: 'cancelChildren' });
    d.c.pending = {};
    d.c.runs = {};
    d.emit({ type: 'record', eventType: 'workflow.failed', error: f.error });
    d.emit({ type: 'record', eventType: 'playbook.failed', error: f.error });
    d.emit({ type: 'finish', finished: f });
    return;
  }
  if (Object.keys(d.c.runs).length === 0 && Object.keys(d.c.pending).length === 0) {
    d.c.finished = { status: 'completed', result: d.c.lastResult, error: null };
    d.emit({ type: 'record', eventType: 'workflow.completed', result: d.c.lastResult });
    d.emit({ type: 'record', eventType: 'playbook.completed', result: d.c.lastResult });
    d.emit({ type: 'finish', finished: d.c.finished });
  }
}

/** Entry of a new execution: enter the entry step. */
export function reduceStart(pb: NormalizedPlaybook, ctx: ExecutionContext): Reduction {
  const d = new Draft(pb, ctx);
  startStep(d, pb.entry);
  settle(d);
  return d.done();
}

/** Applies one input event to a running execution. Unknown or stale command seqs change nothing. */
export function reduceEvent(pb: NormalizedPlaybook, ctx: ExecutionContext, ev: ExecutionEvent): Reduction {
  const d = new Draft(pb, ctx);
  switch (ev.type) {
    case 'command.completed':
    case 'command.failed':
    case 'child.finished': {
      const p = d.c.pending[ev.seq];
      if (!p) return { context: ctx, effects: [] };
      delete d.c.pending[ev.seq];
      let tasks: Record<string, TaskOutcome>;
      if (ev.type === 'command.completed') tasks = ev.tasks;
      else if (ev.type === 'command.failed' && ev.tasks && Object.values(ev.tasks).some((t) => t.status === 'error')) {
        // A task failed and the report says which: its outcomes are the tasks' own.
        tasks = ev.tasks;
      } else if (ev.type === 'command.failed') {
        // The command broke without a failed task (worker error, refused report): the first task
        // it did not finish failed with the command's error.
        const step = d.step(d.c.runs[p.run].step);
        const it = d.c.runs[p.run].iterations[p.iteration];
        const seg = segmentsOf(step)[it.segment];
        const done = ev.tasks ?? {};
        const failedTask = seg.tasks.find((t) => !(t.name in done))?.name ?? seg.tasks.at(-1)!.name;
        tasks = { ...done, [failedTask]: { status: 'error', data: null, error: ev.error } };
      } else {
        const step = d.step(d.c.runs[p.run].step);
        const it = d.c.runs[p.run].iterations[p.iteration];
        const task = segmentsOf(step)[it.segment].tasks[0];
        tasks = {
          [task.name]: {
            status: ev.status === 'completed' ? 'ok' : 'error',
            data: { execution_id: ev.child_execution_id, status: ev.status, result: ev.result },
            ...(ev.status === 'completed' ? {} : { error: ev.error ?? { message: `child execution ${ev.status}`, code: `child_${ev.status}` } }),
          },
        };
      }
      finishIteration(d, p.run, p.iteration, tasks);
      break;
    }
    case 'execution.cancelled': {
      const seqs = Object.entries(d.c.pending).filter(([, p]) => p.kind === 'worker').map(([s]) => Number(s));
      if (seqs.length) d.emit({ type: 'cancelCommands', seqs });
      if (Object.values(d.c.pending).some((p) => p.kind === 'child')) d.emit({ type: 'cancelChildren' });
      d.c.pending = {};
      d.c.runs = {};
      d.c.finished = { status: 'cancelled', result: null, error: { message: ev.reason, code: 'cancelled' } };
      d.emit({ type: 'finish', finished: d.c.finished });
      return d.done();
    }
    case 'execution.abandoned':
      fail(d, { message: ev.reason, code: 'abandoned' }, '');
      break;
  }
  settle(d);
  return d.done();
}
