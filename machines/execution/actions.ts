import type { NormalizedPlaybook } from '../../src/dsl/parse-playbook.ts';
import { renderValue } from '../../src/dsl/render.ts';
import { CODE } from '../error-codes.ts';
import { EVENT } from '../event-types.ts';
import { errorOf, evaluateArcs, openRouteFor, routeIn, routeState } from './arcs.ts';
import { emptyResults, resultList } from './loop-results.ts';
import { endedRun, hasRoom, loopOver, runsWhere } from './run-summary.ts';
import { segmentsOf } from './segments.ts';
import { baseRenderContext, Draft, endChildAttempt, fail, fillLoop, finishIteration, launchIteration, stopInFlight, taskTimerFired } from './step-work.ts';
import { endWait, startWait } from './step-wait.ts';
import type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput, Route, StepOutcome, StepRun, TaskOutcome } from './types.ts';
import { keyOf } from './keys.ts';

// The work of the execution machine's named actions (machines/execution.machine.ts), pure: each
// takes the context (and its params or event) and returns the next context and the effects to
// enqueue. They run a step's work (render loop inputs, issue commands, start children, record
// outcomes); WHICH step runs next and WHEN the execution ends is decided by the statechart's
// transitions and guards (machines/playbook-statechart.ts, ./guards.ts), not here.

export type Reduction = { context: ExecutionContext; effects: Effect[] };

/** Steps entered in one input event before the execution fails with `step_cycle` (a cycle of steps without tasks). */
export const MAX_IMMEDIATE_STEPS_PER_EVENT = 1000;
/** The error an execution fails with once a step would be entered past MAX_IMMEDIATE_STEPS_PER_EVENT in one event. */
export const STEP_CYCLE_ERROR = { message: `more than ${MAX_IMMEDIATE_STEPS_PER_EVENT} steps entered without running a task; is there a cycle of steps without tools?`, code: CODE.step_cycle } as const;

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
    routes: [],
    immediate: 0,
    paused: false,
    held: [],
    signals: input.signals ?? {},
    queued: input.admission !== undefined && !input.admission.admitted,
  };
}

/**
 * `admit` (execution.admitted while queued): the entry step may run; a debounced start's last
 * payload becomes its input, and the key and priority it was admitted with (that start's) are the
 * ones its commands carry and its end gives back.
 */
export function admit(pb: NormalizedPlaybook, ctx: ExecutionContext, ev: ExecutionEvent): Reduction {
  if (ev.type !== EVENT.executionAdmitted) return { context: ctx, effects: [] };
  let input = ev.args ? { ...ctx.input, args: ev.args, workload: { ...pb.workload, ...ev.args } } : ctx.input;
  const f = ev.flow;
  if (f && input.admission) input = { ...input, priority: f.priority, admission: { ...input.admission, limit: f.limit, key: f.key } };
  return { context: { ...ctx, queued: false, input }, effects: [] };
}

// ---------------------------------------------------------------------------------------------
// The named actions.

/** `startRun` (entry of a step's `active`, or an arc into a step already active): a new run of the step. */
export function startRun(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  if (d.c.finished) return d.done();
  // A retry takes what the step's runs did in the execution it retries (their side effects happened there).
  const replayed = takeReplayed(d, name);
  // Runs a retry replays are as many as its list holds, so they cannot cycle for ever: a polling
  // loop that ran a thousand times before the retried step is replayed whole, not cut as a cycle.
  if (!replayed?.listed && ++d.c.immediate > MAX_IMMEDIATE_STEPS_PER_EVENT) {
    fail(d, STEP_CYCLE_ERROR, name);
    return d.done();
  }
  const step = d.step(name);
  const run: StepRun = { id: d.c.nextRun++, step: name, loop: null, iterations: {}, lastTasks: {} };
  d.addRun(run);
  d.emit({ type: 'record', eventType: EVENT.stepEnter, step: name });
  if (replayed) {
    d.emit({ type: 'record', eventType: EVENT.stepReplayed, step: name, context: { status: replayed.outcome.status }, result: replayed.outcome.result });
    run.outcome = replayed.outcome;
    return d.done();
  }
  if (step.wait) {
    startWait(d, run, step.wait);
    return d.done();
  }
  if (step.tasks.length === 0) {
    run.outcome = { status: 'ok', result: null, error: null, tasks: {} };
    return d.done();
  }
  if (!step.loop) {
    launchIteration(d, run, null);
    return d.done();
  }
  let items: unknown;
  try {
    items = renderValue(step.loop.in, baseRenderContext(d.c), `${name}.loop.in`);
  } catch (err) {
    run.outcome = { status: 'error', result: null, error: errorOf(err), tasks: {} };
    return d.done();
  }
  if (!Array.isArray(items)) {
    run.outcome = { status: 'error', result: null, error: { message: `${name}.loop.in must render to a list`, code: CODE.loop_input }, tasks: {} };
    return d.done();
  }
  run.loop = {
    items,
    iterator: step.loop.iterator ?? 'item',
    parallel: step.loop.mode === 'parallel',
    maxInFlight: step.loop.max_in_flight ?? (step.loop.mode === 'parallel' ? items.length || 1 : 1),
    next: 0,
    done: 0,
    results: emptyResults(items.length),
    failed: null,
  };
  // The first items go out as the step is entered; `launchItems` refills as items end.
  fillLoop(d, run);
  return d.done();
}

/**
 * The recorded outcome (ExecutionInput.replay) a new run of step `name` takes instead of running:
 * the next of its list (`listed`), counted as taken; or an older log's single outcome, its first
 * run's, unless the step has run. Own keys only: a step may be named like a property every object
 * inherits (`constructor`).
 */
function takeReplayed(d: Draft, name: string): { outcome: StepOutcome; listed: boolean } | undefined {
  const replay = d.c.input.replay;
  const recorded = replay && Object.hasOwn(replay, name) ? replay[name] : undefined;
  if (!recorded) return undefined;
  if (!Array.isArray(recorded)) return d.c.completedSteps.includes(name) ? undefined : { outcome: recorded, listed: false };
  const takenSoFar = d.c.replayTaken ?? {};
  const taken = Object.hasOwn(takenSoFar, name) ? takenSoFar[name] : 0;
  if (taken >= recorded.length) return undefined;
  d.c.replayTaken = { ...takenSoFar, [name]: taken + 1 };
  return { outcome: recorded[taken], listed: true };
}

/** `launchItems` (guard loopHasRoom): launches items of the step's loops up to their limit. */
export function launchItems(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  for (const r of runsWhere(ctx, name, hasRoom)) fillLoop(d, d.run(r.id));
  return d.done();
}

/** `endLoop` (guard loopDone): a loop with every item over (or one failed and none in flight) ends its run. */
export function endLoop(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  for (const r of runsWhere(ctx, name, loopOver)) {
    const run = d.run(r.id);
    const loop = run.loop!;
    d.emit({ type: 'record', eventType: EVENT.loopDone, step: name, context: loop.items.length === 0 ? { count: 0 } : { count: loop.done, failed: Boolean(loop.failed) } });
    run.outcome = { status: loop.failed ? 'error' : 'ok', result: resultList(loop.results), error: loop.failed, tasks: run.lastTasks };
  }
  return d.done();
}

/**
 * `exitRun` (guard runEnded): the step's oldest ended run leaves: its outcome becomes
 * `steps.<name>` and a route whose arcs the other regions' `arc` guards read.
 */
export function exitRun(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  const ended = endedRun(ctx, name)!;
  const outcome = ended.outcome!;
  delete d.runs()[keyOf(ended.id)];
  d.c.steps = { ...d.c.steps, [name]: outcome };
  if (!d.c.completedSteps.includes(name)) d.c.completedSteps = [...d.c.completedSteps, name];
  d.c.lastResult = outcome.result;
  d.emit({
    type: 'record',
    eventType: EVENT.stepExit,
    step: name,
    // `at_once`: a wait that ended as it began has no seq and no event of its own but this one.
    context: ended.atOnce ? { status: outcome.status, at_once: ended.atOnce } : { status: outcome.status },
    result: outcome.status === 'ok' ? outcome.result : undefined,
    error: outcome.error ?? undefined,
  });
  // `signal`: what ended a step that waited for one (null otherwise), for its arcs' templates.
  if (!d.c.finished) d.c.routes = [...d.c.routes, { run: ended.id, step: name, outcome, scope: { ...baseRenderContext(d.c), outcome, signal: outcome.signal ?? null }, taken: [] }];
  return d.done();
}

/** `takeArc` (guard arc): marks the arc taken on its route (dropped once all its arcs are) and writes its `set` into vars. */
export function takeArc(pb: NormalizedPlaybook, ctx: ExecutionContext, from: string, index: number): Reduction {
  const d = new Draft(pb, ctx);
  const route = openRouteFor(pb, ctx.routes, from, index)!;
  const taken = { ...route, taken: [...route.taken, index] };
  // Its last arc taken, the route is done (a route that fires no arc is dropped by dropRoute).
  d.c.routes = routeState(pb, taken) === 'routed' ? withoutRoute(ctx.routes, route) : ctx.routes.map((r) => (r === route ? taken : r));
  const values = evaluateArcs(pb, route).sets.get(index);
  if (values) d.c.vars = { ...d.c.vars, ...values };
  return d.done();
}

const withoutRoute = (routes: Route[], route: Route): Route[] => routes.filter((r) => r !== route);

/** `dropRoute` (guard routed): the route fires no arc (the step succeeded and its branch ends here). */
export function dropRoute(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  d.c.routes = withoutRoute(ctx.routes, routeIn(pb, ctx.routes, name, 'routed')!);
  return d.done();
}

/** `failArc` (guard arcError): a `when` or `set` failed to render; the `set`s of arcs before it hold, the execution fails. */
export function failArc(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  const route = routeIn(pb, ctx.routes, name, 'error')!;
  const ev = evaluateArcs(pb, route);
  for (const i of ev.fired) {
    const values = ev.sets.get(i);
    if (values) d.c.vars = { ...d.c.vars, ...values };
  }
  d.c.routes = withoutRoute(ctx.routes, route);
  fail(d, ev.error!.error, name);
  return d.done();
}

/** `failUnhandled` (guard unhandledFailure): the step ended in error and no arc matched. */
export function failUnhandled(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string): Reduction {
  const d = new Draft(pb, ctx);
  const route = routeIn(pb, ctx.routes, name, 'unhandled')!;
  d.c.routes = withoutRoute(ctx.routes, route);
  fail(d, route.outcome.error ?? { message: `step ${name} failed` }, name);
  return d.done();
}

// A child that ended otherwise than completed fails its `playbook` task with this code (unless it has its own error).
const CHILD_ENDED = { failed: CODE.child_failed, cancelled: CODE.child_cancelled } as const;

/** `recordOutcome` (guard pendingCommand): what a command's report or a child's end says, folded into its iteration. */
export function recordOutcome(pb: NormalizedPlaybook, ctx: ExecutionContext, ev: ExecutionEvent): Reduction {
  if (ev.type === EVENT.timerFired || ev.type === EVENT.waitTimedOut || ev.type === EVENT.signalReceived) {
    const d = new Draft(pb, ctx);
    d.c.immediate = 0;
    // A `playbook` task's own timers (its timeout, its retry's delay) are not the step's wait.
    if (ev.type === EVENT.timerFired && taskTimerFired(d, ev.seq)) return d.done();
    if (ev.seq !== null) endWait(d, ev.seq, ev.type === EVENT.signalReceived ? ev.signal : ev.type === EVENT.waitTimedOut ? 'timeout' : 'fired');
    return d.done();
  }
  if (ev.type !== EVENT.commandCompleted && ev.type !== EVENT.commandFailed && ev.type !== EVENT.childFinished) return { context: ctx, effects: [] };
  const d = new Draft(pb, ctx);
  d.c.immediate = 0;
  const p = d.c.pending[keyOf(ev.seq)];
  delete d.pending()[keyOf(ev.seq)];
  const run = d.c.runs[keyOf(p.run)];
  const segment = segmentsOf(d.step(run.step))[run.iterations[p.iteration].segment];
  let tasks: Record<string, TaskOutcome>;
  if (ev.type === EVENT.commandCompleted) tasks = ev.tasks;
  else if (ev.type === EVENT.commandFailed && ev.tasks && Object.values(ev.tasks).some((t) => t.status === 'error')) {
    // A task failed and the report says which: its outcomes are the tasks' own.
    tasks = ev.tasks;
  } else if (ev.type === EVENT.commandFailed) {
    // The command broke without a failed task (worker error, refused report): the first task
    // it did not finish failed with the command's error.
    const done = ev.tasks ?? {};
    const failedTask = segment.tasks.find((t) => !(t.name in done))?.name ?? segment.tasks.at(-1)!.name;
    tasks = { ...done, [failedTask]: { status: 'error', data: null, error: ev.error } };
  } else {
    // Its timeout timer ends; a failure may be retried (the task's `retry`).
    endChildAttempt(d, p, {
      status: ev.status === 'completed' ? 'ok' : 'error',
      data: { execution_id: ev.child_execution_id, status: ev.status, result: ev.result },
      ...(ev.status === 'completed' ? {} : { error: ev.error ?? { message: `child execution ${ev.status}`, code: CHILD_ENDED[ev.status] } }),
    });
    return d.done();
  }
  finishIteration(d, p.run, p.iteration, tasks);
  return d.done();
}

/** `bufferSignal` (guard bufferable): a signal no step waits for yet, kept for the step with `buffer: true` that will. */
export function bufferSignal(pb: NormalizedPlaybook, ctx: ExecutionContext, ev: ExecutionEvent): Reduction {
  if (ev.type !== EVENT.signalReceived) return { context: ctx, effects: [] };
  const d = new Draft(pb, ctx);
  // Own keys only: a signal may be named like a property every object inherits (`constructor`).
  const kept = Object.hasOwn(ctx.signals, ev.signal.name) ? ctx.signals[ev.signal.name] : [];
  d.c.signals = { ...ctx.signals, [ev.signal.name]: [...kept, ev.signal] };
  return d.done();
}

/** `pause` (execution.paused): from now on commands and child starts are held (Draft.emit), not issued. */
export function pause(pb: NormalizedPlaybook, ctx: ExecutionContext): Reduction {
  const d = new Draft(pb, ctx);
  d.c.paused = true;
  return d.done();
}

/** `resume` (execution.resumed): what was held while paused is issued, in the order it was decided. */
export function resume(pb: NormalizedPlaybook, ctx: ExecutionContext): Reduction {
  const d = new Draft(pb, ctx);
  d.c.paused = false;
  d.c.held = [];
  for (const e of ctx.held) d.emit(e);
  return d.done();
}

/** `cancel` (execution.cancelled): stops what is in flight (children too unless `cascade` is false) and ends cancelled. */
export function cancel(pb: NormalizedPlaybook, ctx: ExecutionContext, ev: ExecutionEvent): Reduction {
  const d = new Draft(pb, ctx);
  stopInFlight(d, ev.type !== EVENT.executionCancelled || ev.cascade !== false, ev.type === EVENT.executionCancelled ? ev.requestedBy : undefined);
  d.c.finished = { status: 'cancelled', result: null, error: { message: ev.type === EVENT.executionCancelled ? ev.reason : 'cancelled', code: CODE.cancelled } };
  d.emit({ type: 'finish', finished: d.c.finished });
  return d.done();
}

/** `settleFailed` (guard failing, into `failed`): stops what is in flight and records the failed pair. */
export function settleFailed(pb: NormalizedPlaybook, ctx: ExecutionContext): Reduction {
  const d = new Draft(pb, ctx);
  const f = d.c.finished!;
  stopInFlight(d);
  d.emit({ type: 'record', eventType: EVENT.workflowFailed, error: f.error });
  d.emit({ type: 'record', eventType: EVENT.playbookFailed, error: f.error });
  d.emit({ type: 'finish', finished: f });
  return d.done();
}

/** `settleCompleted` (guard allDone, into `completed`): the result is the last step outcome's. */
export function settleCompleted(pb: NormalizedPlaybook, ctx: ExecutionContext): Reduction {
  const d = new Draft(pb, ctx);
  d.c.finished = { status: 'completed', result: d.c.lastResult, error: null };
  d.emit({ type: 'record', eventType: EVENT.workflowCompleted, result: d.c.lastResult });
  d.emit({ type: 'record', eventType: EVENT.playbookCompleted, result: d.c.lastResult });
  d.emit({ type: 'finish', finished: d.c.finished });
  return d.done();
}
