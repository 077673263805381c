import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { getAdjacencyMap } from 'xstate/graph';
import type { NormalizedPlaybook, NormalizedStep } from '../src/dsl/parse-playbook.ts';
import { asObject } from '../src/objects.ts';
import { CODE } from './error-codes.ts';
import { EVENT, type EventType } from './event-types.ts';
import { createExecutionMachine, type ExecutionMachine } from './execution.machine.ts';
import { executionView, type StepView } from './execution-view.ts';
import { topStateOf } from './execution/step-phase.ts';
import { segmentsOf } from './execution/segments.ts';
import { attemptsOf } from '../src/dsl/retry-delay-ms.ts';
import type { Effect, ExecutionEvent, ExecutionInput, PendingCommand, TaskError, TaskOutcome } from './execution/types.ts';
import { SimulationData, type Undecided } from './simulation-data.ts';
import { SimulatedEntries } from './simulated-entries.ts';
import { payloadRefusal } from './payload-refusal.ts';
import { checkOptions, checkSimulationInput, playbookOf } from './simulation-input.ts';
import { failureCodeOf, type SimulatedOutcome } from './simulated-outcome.ts';
import { entryStepCycle } from './step-cycle-problem.ts';
import type { Outcome, PathsReport, SimulatedPath } from './simulated-path.ts';

export type { PathsReport, SimulatedPath } from './simulated-path.ts';

export { InvalidPlaybookError, playbookFromYaml } from './simulation-input.ts';
import { keyOf, numberOf } from './execution/keys.ts';
import { MAX_SIMULATED_PATH_EVENTS, MAX_SIMULATED_PATHS, pathsToEnds } from './paths-to-ends.ts';

// Runs a playbook's compiled statechart with no database and no workers: every command a step
// issues is answered at once with the outcome chosen for that step (ok unless told otherwise) and
// the step's example result (`examples:` or the caller's), else null data. A decision (arcs, a
// loop's `in`) that reads a result with no example stops the run: it "depends on data".

type Snapshot = SnapshotFrom<ExecutionMachine>;
export type { SimulatedOutcome };

/**
 * Outcomes per step name: one for every command of the step, or a list used in turn (the last
 * repeats). A step that waits for a signal gets it (`ok`, its payload the step's example) or, when
 * its wait has a `timeout`, times out (`timeout`); a timer only fires (`ok`), a step without tool
 * only ends `ok`, and `timeout` fails only a `playbook` task with `timeout_seconds`: any other
 * outcome throws, naming the step (as `svc simulate` refuses it). A `playbook` task's own timers
 * (its retry's delay) fire by themselves, taking no outcome: each attempt of the task takes one.
 * `error:CODE` fails the command with that code (`error:connection`), which a `when:` may test.
 */
export type SimulatedOutcomes = Record<string, SimulatedOutcome | SimulatedOutcome[]>;

export type SimulationResult = {
  /** The execution's state, or `depends_on_data` when a decision needs a result with no example (see `undecided`). */
  status: string;
  /** Steps in the order they were entered (a loop step once per run, not per item). */
  path: string[];
  /** For each step of `path`, the step whose exit entered it (its arc taken), null for the start's. */
  from: (string | null)[];
  steps: Record<string, StepView>;
  error: { message: string; code?: string; step?: string } | null;
  /**
   * What the execution would end with (its `result`, as GET /api/executions/{id} answers it: the
   * machine's own, from the outcomes and example results given); null until it ends, or undecided.
   */
  result: unknown;
  /** Commands answered (a loop issues one per item). */
  commands: number;
  /** With `pauseWhenUndecided`: the steps whose next command has no outcome yet (empty once ended). */
  waiting?: string[];
  /** The decision the run stopped before: its step, `next` or `loop.in`, and the steps whose results it needs. */
  undecided?: Undecided;
};

/** A simulation's status when a decision reads a result it has no example of. */
export const DEPENDS_ON_DATA = 'depends_on_data';

/** Events answered before a simulation gives up (a playbook cycling forever). */
export const MAX_SIMULATED_COMMANDS = 10_000;
/** --paths cuts a path once it has run this many steps per step of the playbook (cycles are cut there). */
export const MAX_PATH_RUNS_PER_STEP = 5;
/** States --paths explores at most (the adjacency map of xstate/graph). */
export const MAX_PATH_STATES = 2_000;
/** ...and the characters of their serialized text together (each is its whole context), past which none is explored further. */
export const MAX_PATH_STATE_CHARS = 16_000_000;

/** The step runs after which --paths cuts a path of this playbook. */
export const pathDepthOf = (pb: NormalizedPlaybook): number => MAX_PATH_RUNS_PER_STEP * pb.workflow.length;

const machines = new WeakMap<NormalizedPlaybook, ExecutionMachine>();

function machineOf(pb: NormalizedPlaybook): ExecutionMachine {
  let m = machines.get(pb);
  if (!m) machines.set(pb, (m = createExecutionMachine(pb)));
  return m;
}

/** The start a simulation stands for; a payload a start refuses starts nothing to simulate: an Error says so. */
function inputOf(pb: NormalizedPlaybook, payload: Record<string, unknown>): ExecutionInput {
  const refused = payloadRefusal(pb, payload);
  if (refused) throw new Error(refused);
  return { executionId: 1, catalogId: 0, path: pb.metadata.path ?? pb.metadata.name ?? 'simulated', parentExecutionId: null, parentSeq: null, rootExecutionId: 1, workload: { ...pb.workload, ...payload }, args: payload };
}

/**
 * The event that answers a pending command with an outcome: every task ok, or the last one failed;
 * the last task's data is the step's example result (null without one); a child's, the `result`
 * (and `execution_id`) of its example, as the task's data is `{execution_id, status, result}`.
 */
function answer(pb: NormalizedPlaybook, snap: Snapshot, seq: number, outcome: SimulatedOutcome, data: SimulationData): ExecutionEvent {
  const c = snap.context;
  const p = c.pending[keyOf(seq)];
  const run = c.runs[keyOf(p.run)];
  const step = pb.workflow.find((s) => s.step === run.step)!;
  const example = data.has(run.step) ? data.results[run.step] : null;
  if (p.kind === 'wait') {
    if (step.wait?.kind !== 'signal' || taskTimer(p)) return { type: EVENT.timerFired, seq };
    // A wait without `timeout` never times out in a run (it waits until signalled or cancelled): it gets its signal.
    return outcome === 'ok' || !timesOut(step) ? { type: EVENT.signalReceived, seq, signal: { name: step.wait.signal, payload: example, by: 'simulation' } } : { type: EVENT.waitTimedOut, seq };
  }
  const segment = segmentsOf(step)[run.iterations[p.iteration].segment];
  const code = failureCodeOf(outcome) ?? CODE.simulated;
  if (p.kind === 'child') {
    // Its timeout runs out first: the timer bounding the child fires.
    if (outcome === 'timeout' && p.timer !== undefined) return { type: EVENT.timerFired, seq: p.timer };
    // The example is the task's data, {execution_id, status, result}: the child ended with its result.
    const child = asObject(example);
    const childId = typeof child.execution_id === 'number' && Number.isSafeInteger(child.execution_id) ? child.execution_id : 0;
    return outcome === 'ok'
      ? { type: EVENT.childFinished, seq, child_execution_id: childId, status: 'completed', result: Object.hasOwn(child, 'result') ? child.result : null, error: null }
      : { type: EVENT.childFinished, seq, child_execution_id: 0, status: 'failed', result: null, error: { message: 'simulated failure', code } };
  }
  const tasks: Record<string, TaskOutcome> = {};
  const last = segment.tasks.length - 1;
  segment.tasks.forEach((t, i) => {
    const d = i === last ? example : null;
    tasks[t.name] = outcome !== 'ok' && i === last ? { status: 'error', data: d, error: { message: 'simulated failure', code } } : { status: 'ok', data: d };
  });
  return { type: EVENT.commandCompleted, seq, tasks };
}

/** Whether a step waits for a signal with a `timeout`: only such a wait can time out. */
const timesOut = (step: NormalizedStep | undefined): boolean => step?.wait?.kind === 'signal' && step.wait.timeoutMs !== null;
/** Whether a pending wait is a `playbook` task's own timer (its timeout, its retry's delay), not a step's wait. */
const taskTimer = (p: PendingCommand): boolean => p.kind === 'wait' && (p.child !== undefined || p.retry === true);
/** Whether a pending wait is the delay before a `playbook` task's next attempt. */
const retryDelay = (p: PendingCommand): boolean => p.kind === 'wait' && p.retry === true;

/** The events a simulation answers pending work with. */
const ANSWERS: ReadonlySet<string> = new Set([EVENT.commandCompleted, EVENT.childFinished, EVENT.timerFired, EVENT.signalReceived, EVENT.waitTimedOut]);

/** The outcome an answer stands for. */
function outcomeOf(ev: ExecutionEvent): Outcome {
  if (ev.type === EVENT.waitTimedOut) return 'timeout';
  if (ev.type === EVENT.childFinished) return ev.status === 'completed' ? 'ok' : 'error';
  if (ev.type === EVENT.commandCompleted) return Object.values(ev.tasks).some((t) => t.status === 'error') ? 'error' : 'ok';
  return 'ok';
}

const entered = (effects: Effect[]): string[] => effects.flatMap((e) => (e.type === 'record' && e.eventType === EVENT.stepEnter && e.step ? [e.step] : []));

/** The steps entered before the decision `u` (a step's arcs once it exited, its loop once it entered). */
function enteredBefore(effects: Effect[], u: Undecided): string[] {
  const out: string[] = [];
  const at = u.at === 'next' ? EVENT.stepExit : EVENT.stepEnter;
  for (const e of effects) {
    if (e.type !== 'record' || !e.step) continue;
    if (e.eventType === EVENT.stepEnter) out.push(e.step);
    if (e.eventType === at && e.step === u.step) break;
  }
  return out;
}
const effectsOf = (actions: readonly { type: string; params?: unknown }[]): Effect[] => actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : []));
const recorded = (effects: Effect[], eventType: EventType): string[] => effects.flatMap((e) => (e.type === 'record' && e.eventType === eventType && e.step ? [e.step] : []));

/** The first decision of a transition (its effects, the snapshot after it) that reads a result with no example. */
function undecidedIn(data: SimulationData, effects: Effect[], after: Snapshot): Undecided | null {
  const ran = after.context.steps;
  for (const step of recorded(effects, EVENT.stepEnter)) {
    const u = data.undecidedLoop(step, ran) ?? data.undecidedEnter(step, ran);
    if (u) return u;
  }
  for (const step of recorded(effects, EVENT.stepExit)) {
    const u = data.undecidedNext(step, ran);
    if (u) return u;
  }
  return null;
}

/**
 * Answering `seq` with a failure the simulation chose: undecided when the failed task is a
 * `playbook` task with attempts left whose `retry.when` reads what the simulation lacks (the
 * failure's code above all, unless given as `error:CODE`: the machine would decide on
 * `simulated`, where a run retries or not).
 */
function undecidedRetry(pb: NormalizedPlaybook, data: SimulationData, s: Snapshot, seq: number, outcome: SimulatedOutcome): Undecided | null {
  const p = s.context.pending[keyOf(seq)];
  const code = failureCodeOf(outcome);
  if (code === null || p.kind !== 'child') return null;
  const run = s.context.runs[keyOf(p.run)];
  const it = run.iterations[p.iteration];
  const task = segmentsOf(pb.workflow.find((w) => w.step === run.step)!)[it.segment].tasks[0];
  if (task.retry.when === undefined || (it.attempt ?? 1) >= attemptsOf(task.retry)) return null;
  return data.undecidedRetry(run.step, task.retry.when, s.context.steps, code !== CODE.simulated);
}

/**
 * Runs a playbook (YAML text or parsed) to its end with the given outcomes per step (default ok)
 * and example results (`results` over the playbook's `examples:`), answering pending commands
 * oldest first; returns the steps entered in order and the end state. A decision reading a result
 * with no example ends the run before it with status `depends_on_data` and `undecided`.
 * With `pauseWhenUndecided` a step with no outcome left (absent, or its list used up) is not
 * answered: the oldest command whose step has one is, and the run stops once none has, with
 * `waiting` set, so a person can choose step by step (the GUI), a branch before another.
 */
export function simulatePlaybook(
  playbook: string | NormalizedPlaybook,
  outcomes: SimulatedOutcomes = {},
  opts: { payload?: Record<string, unknown>; pauseWhenUndecided?: boolean; results?: Record<string, unknown> } = {},
): SimulationResult {
  const pb = playbookOf(playbook);
  checkOptions(opts);
  checkSimulationInput(pb, outcomes, opts.results, opts.payload);
  const machine = machineOf(pb);
  const input = inputOf(pb, opts.payload ?? {});
  const data = new SimulationData(pb, { workload: input.workload, args: input.args }, opts.results);
  let [snap, actions] = initialTransition(machine, input);
  let undecided = undecidedIn(data, effectsOf(actions), snap);
  const undecidedAtStart = undecided !== null;
  const entries = new SimulatedEntries();
  entries.follow(effectsOf(actions), undecided);
  const used = new Map<string, number>();
  let before: Snapshot | null = null;
  let commands = 0;
  // A retry's delay only runs out: it is no choice and takes none of the step's outcomes.
  const stepOf = (p: PendingCommand) => snap.context.runs[keyOf(p.run)].step;
  // Own keys only: a step may be named like a property every object inherits (`constructor`,
  // `toString`), which a plain lookup would take for a chosen outcome.
  const chosenFor = (step: string) => (Object.hasOwn(outcomes, step) ? outcomes[step] : undefined);
  const undecidedStep = (step: string) => {
    const decided = chosenFor(step);
    return decided === undefined || (Array.isArray(decided) && (used.get(step) ?? 0) >= decided.length);
  };
  while (snap.status !== 'done' && !undecided && commands < MAX_SIMULATED_COMMANDS) {
    // Oldest first; step by step, the oldest whose outcome is chosen: a branch decided ends
    // before one still waiting for its choice, as it may in a run.
    const seqs = Object.keys(snap.context.pending).map(numberOf).sort((a, b) => a - b);
    // A retry's delay runs out by itself; a child's timeout is a choice (`timeout`), not a given.
    const seq = seqs.find((q) => !opts.pauseWhenUndecided || retryDelay(snap.context.pending[keyOf(q)]) || !undecidedStep(stepOf(snap.context.pending[keyOf(q)])));
    if (seq === undefined) break;
    const pending = snap.context.pending[keyOf(seq)];
    const step = stepOf(pending);
    const n = used.get(step) ?? 0;
    const decided = chosenFor(step);
    const timer = taskTimer(pending);
    const chosen = decided ?? 'ok';
    if (!timer) used.set(step, n + 1);
    const outcome = timer ? 'ok' : Array.isArray(chosen) ? (chosen[Math.min(n, chosen.length - 1)] ?? 'ok') : chosen;
    undecided = undecidedRetry(pb, data, snap, seq, outcome);
    if (undecided) break;
    const [next, nextActions] = transition(machine, snap, answer(pb, snap, seq, outcome, data));
    // A decision made on data the simulation does not have is not taken: the run stops before it.
    undecided = undecidedIn(data, effectsOf(nextActions), next);
    if (undecided) {
      entries.follow(effectsOf(nextActions), undecided);
      break;
    }
    commands++;
    before = snap;
    [snap, actions] = [next, nextActions];
    entries.follow(effectsOf(actions));
  }
  const view = executionView(pb, snap, snap.status === 'done' ? before : null);
  const f = snap.context.finished;
  // Undecided in the start's own transition, `snap` holds what the missing data did (a template
  // error): no verdict, and the steps not entered before the decision were not skipped by it
  // (the failure's doing): they wait on the data, as they do when a later decision is undecided.
  const pending: StepView = { status: 'pending' };
  const steps = undecidedAtStart ? Object.fromEntries(Object.entries(view.steps).map(([name, v]) => [name, entries.path.includes(name) ? v : pending])) : view.steps;
  const result: SimulationResult = { status: undecided ? DEPENDS_ON_DATA : topStateOf(snap.value), path: entries.path, from: entries.from, steps, error: undecided ? null : (f?.error ?? null), result: undecided ? null : (f?.result ?? null), commands };
  if (undecided) result.undecided = undecided;
  if (opts.pauseWhenUndecided && !undecided) {
    const pending = snap.status === 'done' ? [] : Object.values(snap.context.pending).map((p) => snap.context.runs[keyOf(p.run)].step);
    result.waiting = [...new Set(pending)];
  }
  return result;
}

/** Whether a decision already made in this snapshot read a result with no example (the path ends there). */
function decidedOnMissingData(data: SimulationData, s: Snapshot): boolean {
  const ran = s.context.steps;
  const touched = new Set([...Object.keys(ran), ...Object.values(s.context.runs).map((r) => r.step)]);
  for (const step of touched) if (data.undecidedLoop(step, ran) || data.undecidedEnter(step, ran) || (Object.hasOwn(ran, step) && data.undecidedNext(step, ran))) return true;
  return false;
}

/**
 * Every simple path of the playbook's machine (xstate/graph) where each command, oldest first,
 * ends ok or error (with the example results, else null data); a path is cut after
 * pathDepthOf(pb) step runs, and ends `depends_on_data` before a decision that reads a result
 * with no example (or, with `startUnknown`, any value a start gives: its workload, args, where it runs). Also names the steps no path enters. `truncated` when the state space passed
 * MAX_PATH_STATES (the lists are then partial).
 */
export function playbookPaths(
  playbook: string | NormalizedPlaybook,
  opts: { payload?: Record<string, unknown>; results?: Record<string, unknown>; useExamples?: boolean; startUnknown?: boolean } = {},
): PathsReport {
  const pb = playbookOf(playbook);
  checkOptions(opts);
  checkSimulationInput(pb, {}, opts.results, opts.payload);
  const input = inputOf(pb, opts.payload ?? {});
  // Every run fails step_cycle in its first event, whatever its data: the one path, read off the
  // graph, not by the machine entering a thousand steps (a second or more of the server's thread).
  const atEntry = entryStepCycle(pb);
  if (atEntry) {
    const entered = new Set(atEntry.path);
    return { paths: [atEntry], unreachable: pb.workflow.map((s) => s.step).filter((s) => !entered.has(s)), depends_on_data: [], truncated: false };
  }
  const machine = machineOf(pb);
  // No start known (registration): any workload value, a default too, is what a start gives.
  const data = new SimulationData(pb, opts.startUnknown ? null : { workload: input.workload, args: input.args }, opts.results, opts.useExamples ?? true);
  const depth = pathDepthOf(pb);
  const cut = (s: Snapshot) => s.status !== 'done' && s.context.nextRun > depth;
  // A budget of explored states: past it, states offer no events (their paths end there, cut).
  let explored = 0;
  let truncated = false;
  const events = (s: Snapshot): ExecutionEvent[] => {
    if (s.status === 'done' || cut(s) || decidedOnMissingData(data, s)) return [];
    if (++explored > MAX_PATH_STATES || serialized > MAX_PATH_STATE_CHARS) {
      truncated = true;
      return [];
    }
    const seq = Math.min(...Object.keys(s.context.pending).map(numberOf));
    if (!Number.isFinite(seq)) return [];
    const p = s.context.pending[keyOf(seq)];
    // A timer only fires, and a signal wait without `timeout` only gets its signal: one event, not an ok and an error path.
    if (taskTimer(p) || (p.kind === 'wait' && !timesOut(pb.workflow.find((w) => w.step === s.context.runs[keyOf(p.run)].step)))) return [answer(pb, s, seq, 'ok', data)];
    // A parallel loop that failed lets its running items finish: how they end changes only its
    // result's data, not its status or error (the first failure's). One ending (ok) is explored,
    // not each of 2^n: a loop of ten literal items passed the budget and registration warned.
    if (s.context.runs[keyOf(p.run)].loop?.failed) return [answer(pb, s, seq, 'ok', data)];
    return [answer(pb, s, seq, 'ok', data), answer(pb, s, seq, 'error', data)];
  };
  // States are told apart by their text: a large context (a loop over hundreds of items) makes
  // each one long, so the text written counts against the budget too.
  let serialized = 0;
  const serializeState = (s: Snapshot) => {
    const text = JSON.stringify([s.value, s.context]);
    serialized += text.length;
    return text;
  };
  const first = initialTransition(machine, input);
  const found = pathsToEnds(getAdjacencyMap(machine, { input, events, serializeState }), serializeState(first[0]), serializeState);
  // Paths share their prefixes (the edges' events are shared objects): each edge is taken once,
  // not once per path through it. Replaying every path whole was quadratic in a chain's length:
  // registering a chain of 40 steps took 0.2-0.5 s of the server's thread, 100 steps over 1 s.
  const taken = new WeakMap<Snapshot, Map<ExecutionEvent, ReturnType<typeof transition<ExecutionMachine>>>>();
  const next = (s: Snapshot, ev: ExecutionEvent) => {
    let out = taken.get(s);
    if (!out) taken.set(s, (out = new Map()));
    let t = out.get(ev);
    if (!t) out.set(ev, (t = transition(machine, s, ev)));
    return t;
  };
  if (found.truncated) truncated = true;
  const reached = new Set<string>();
  const paths: SimulatedPath[] = [];
  const stoppedAt = new Set<string>();
  for (const p of found.paths) {
    let [snap, actions] = first;
    let undecided = undecidedIn(data, effectsOf(actions), snap);
    const stepPath = undecided ? enteredBefore(effectsOf(actions), undecided) : entered(effectsOf(actions));
    const chosen: SimulatedPath['outcomes'] = [];
    for (const ev of undecided ? [] : p) {
      if (!ANSWERS.has(ev.type) || !('seq' in ev) || ev.seq === null) continue;
      const pending = snap.context.pending[keyOf(ev.seq)];
      // A retry's delay running out is no outcome chosen.
      if (!taskTimer(pending)) chosen.push({ step: snap.context.runs[keyOf(pending.run)].step, outcome: outcomeOf(ev) });
      undecided = taskTimer(pending) ? null : undecidedRetry(pb, data, snap, ev.seq, outcomeOf(ev));
      if (undecided) break;
      const [after, nextActions] = next(snap, ev);
      undecided = undecidedIn(data, effectsOf(nextActions), after);
      if (undecided) {
        stepPath.push(...enteredBefore(effectsOf(nextActions), undecided));
        break;
      }
      [snap, actions] = [after, nextActions];
      stepPath.push(...entered(effectsOf(actions)));
    }
    for (const s of stepPath) reached.add(s);
    // Paths that part only after a retry's undecided decision stop at it alike: one is kept.
    if (undecided) {
      const key = JSON.stringify([stepPath, chosen, undecided]);
      if (stoppedAt.has(key)) continue;
      stoppedAt.add(key);
    }
    paths.push(
      undecided
        ? { status: DEPENDS_ON_DATA, path: stepPath, outcomes: chosen, cut: false, undecided }
        : { status: topStateOf(snap.value), path: stepPath, outcomes: chosen, cut: snap.status !== 'done', ...(snap.context.finished?.error ? { error: snap.context.finished.error } : {}) },
    );
  }
  // A path cut short (a cycle run pathDepthOf(pb) step runs) may go on to a step none reached: a
  // counter cycle that ends after 20 rounds reaches the step after it in a run. Only a step no arc
  // leads to from the entry is then surely unreachable.
  const pastCut = paths.some((p) => p.cut) ? arcReachable(pb) : new Set<string>();
  const notReached = truncated ? [] : pb.workflow.map((s) => s.step).filter((s) => !reached.has(s) && !pastCut.has(s));
  // Example results are samples: when a decision on them is what kept a step off every path
  // (it depends on data without them), other results may reach it. It is not unreachable.
  const sampled = Object.keys(data.results).length > 0 && notReached.length > 0;
  const onData = paths.some((p) => p.undecided) || (sampled && playbookPaths(pb, { payload: opts.payload, useExamples: false }).paths.some((p) => p.undecided));
  return { paths, unreachable: onData ? [] : notReached, depends_on_data: onData ? notReached : [], truncated };
}

/** The steps some chain of arcs leads to from the entry, whatever their `when`s. */
function arcReachable(pb: NormalizedPlaybook): Set<string> {
  const out = new Set([pb.entry]);
  for (const name of out) for (const arc of pb.workflow.find((s) => s.step === name)?.next.arcs ?? []) out.add(arc.step);
  return out;
}

/** The paths registration judges: every command ok or error, no example results, any start's workload. */
export function registrationPaths(pb: NormalizedPlaybook): PathsReport {
  // Examples are samples, not every result a run may see, and a start's payload goes over the
  // workload's defaults: a branch either skips is still possible.
  return playbookPaths(pb, { useExamples: false, startUnknown: true });
}

/**
 * Warnings for registration, only what is certain: steps no simulated path enters (none when a
 * path depends on data; examples are not used, nor are the workload's defaults), paths that end neither completed nor failed (cut after pathDepthOf(pb)
 * step runs: a cycle that may not end), examples naming no step.
 */
export function playbookWarnings(pb: NormalizedPlaybook, report: PathsReport = registrationPaths(pb)): string[] {
  const out: string[] = [];
  for (const s of report.unreachable) out.push(`workflow.${s}: no path reaches step ${s} (every command simulated ok or error)`);
  for (const s of Object.keys(pb.examples ?? {})) if (!pb.workflow.some((w) => w.step === s)) out.push(`examples.${s}: names no step of the workflow`);
  // A path that stopped on data it has no example of is no verdict: neither reached nor open.
  const open = report.paths.filter((p) => p.status !== 'completed' && p.status !== 'failed' && p.status !== DEPENDS_ON_DATA);
  if (open.length && !report.truncated) out.push(`workflow: ${open.length} path(s) end neither completed nor failed, e.g. ${open[0].path.join(' → ')}${open[0].cut ? ` (cut after ${pathDepthOf(pb)} step runs: a cycle that may not end)` : ''}`);
  if (report.truncated) out.push(`workflow: too many paths to check them all (past ${MAX_PATH_STATES} states, ${MAX_SIMULATED_PATHS} paths or ${MAX_SIMULATED_PATH_EVENTS} events); paths were not all checked`);
  return out;
}
