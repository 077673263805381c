import type { NormalizedPlaybook, NormalizedStep, WaitSpec } from '../src/dsl/parse-playbook.ts';
import { EVENT } from './event-types.ts';

// The statechart of a playbook, as plain JSON (no functions): the machine the runtime folds
// events with (machines/execution.machine.ts gives the named actions and guards their code) and
// the definition GET /api/catalog/playbook/{path}/statechart hands to Stately's editor.
//
// Shape: a playbook whose steps can run at the same time (an inclusive fork of two arcs or more)
// has a parallel `running` with one region per step; every other playbook runs one step at a time,
// and `running` is a compound state whose children are its steps. xstate walks every active state
// node on each microstep and each assign, so a region per step made a transition of a 40-step
// chain cost 8 times one of a 1-step playbook (docs/benchmarks.md, sixteenth session); a step that
// is not running is then no node at all. Either way a step moves idle → active → completed |
// failed, and back to active when an arc enters it again; the guards and actions are the same:
// - an arc `A → B when W` is an eventless transition into B's `active`, guarded by
//   `arc {from: A, index, when: W, mode}` (true once A's run ended and W holds over the scope it
//   ended with; exclusive: the first arc that holds, inclusive: each), whose action `takeArc`
//   writes the arc's `set`; entering `active` runs `startRun`, which issues the step's command. In
//   regions it belongs to B's region; in a sequence to A's state, which B's entry leaves;
// - `active` leaves for completed | failed when the run is over (`runEnded`, action `exitRun`,
//   which records the outcome and leaves a route for the arcs); A then fails the execution when A
//   failed and no arc matched (`unhandledFailure`) or an arc did not render (`arcError`), or drops
//   the route when A succeeded and no arc fires (`routed`: the branch ends); `takeArc` drops it
//   once every arc it fires was taken;
// - a loop step's `active` holds `iterating`, which launches items while `loopHasRoom`
//   (max_in_flight; one at a time when sequential) and ends the run when `loopDone`;
// - input events only record what they say (`recordOutcome` for a command's report or a child's
//   end); `running` ends in failed (`failing`), completed (`allDone`) or, on
//   execution.cancelled, cancelled.

export type GuardRef = string | { type: string; params?: Record<string, unknown> };
export type ActionRef = string | { type: string; params?: Record<string, unknown> };
export type TransitionJson = { target?: string; guard?: GuardRef; actions?: ActionRef | ActionRef[]; meta?: Record<string, unknown>; description?: string };
export type StateNodeJson = {
  id?: string;
  type?: 'parallel' | 'final';
  initial?: string;
  entry?: ActionRef | ActionRef[];
  description?: string;
  meta?: Record<string, unknown>;
  always?: TransitionJson[];
  on?: Record<string, TransitionJson | TransitionJson[]>;
  states?: Record<string, StateNodeJson>;
};
export type StatechartJson = StateNodeJson & { id: string; initial: string; states: Record<string, StateNodeJson> };

type Incoming = { from: string; index: number; when?: string; mode: 'exclusive' | 'inclusive' };

/** The input events that end what a run waits for under a seq; each only records what it says (`recordOutcome`). */
const COMMAND_EVENT_TYPES = [EVENT.commandCompleted, EVENT.commandFailed, EVENT.childFinished, EVENT.timerFired, EVENT.waitTimedOut] as const;

const cache = new WeakMap<NormalizedPlaybook, StatechartJson>();

/** Compiles a parsed playbook into its statechart (pure; the same object for the same playbook). */
export function compileStatechart(pb: NormalizedPlaybook): StatechartJson {
  const hit = cache.get(pb);
  if (hit) return hit;
  const incoming = new Map<string, Incoming[]>(pb.workflow.map((s) => [s.step, []]));
  for (const s of pb.workflow) {
    s.next.arcs.forEach((arc, index) => incoming.get(arc.step)?.push({ from: s.step, index, ...(arc.when !== undefined ? { when: arc.when } : {}), mode: s.next.mode }));
  }
  const on: Record<string, TransitionJson | TransitionJson[]> = {};
  for (const type of COMMAND_EVENT_TYPES) on[type] = { guard: 'pendingCommand', actions: 'recordOutcome', description: 'the outcome of a pending command (or child) is recorded in its run; unknown or late seqs change nothing' };
  on[EVENT.signalReceived] = [
    { guard: 'pendingCommand', actions: 'recordOutcome', description: 'a signal for the step waiting for it under its seq: the step moves on with it' },
    { guard: 'bufferable', actions: 'bufferSignal', description: 'a signal sent before its step waits, kept for it (buffer: true)' },
  ];
  on[EVENT.executionAdmitted] = { guard: 'queued', actions: 'admit', description: 'admission (flow control): a queued execution\'s key had room, its debounce window closed; its entry step runs' };
  on[EVENT.executionPaused] = { guard: 'unpaused', actions: 'pause', description: 'pause: commands and child starts are held until resumed; running ones finish' };
  on[EVENT.executionResumed] = { guard: 'paused', actions: 'resume', description: 'resume: what was held is issued' };
  on[EVENT.executionCancelled] = { target: 'cancelled', actions: 'cancel', description: 'cancel: pending commands and child executions (with cascade) are cancelled' };
  const always: TransitionJson[] = [
    { guard: 'failing', target: 'failed', actions: 'settleFailed', description: 'a step failed and no arc handled it (or an arc failed to render, a cycle): what is in flight is cancelled' },
    { guard: 'allDone', target: 'completed', actions: 'settleCompleted', description: 'nothing runs, nothing is pending, no arc is left to follow' },
  ];
  // Each arc's target by its index, looked up once: a search per arc made compiling a chain of 15,000 steps take seconds.
  const indexOf = new Map(pb.workflow.map((s, i) => [s.step, i]));
  const running: StateNodeJson = oneStepAtATime(pb)
    ? { initial: pb.entry, always, on, states: Object.fromEntries(pb.workflow.map((s, i) => [s.step, sequenceStep(pb, s, i, indexOf)])) }
    : { type: 'parallel', always, on, states: Object.fromEntries(pb.workflow.map((s) => [s.step, stepRegion(s, s.step === pb.entry, incoming.get(s.step) ?? [])])) };
  const chart: StatechartJson = {
    id: 'execution',
    initial: 'running',
    description: `playbook ${pb.metadata.path ?? pb.metadata.name}`,
    states: { running, completed: { type: 'final' }, failed: { type: 'final' }, cancelled: { type: 'final' } },
  };
  cache.set(pb, chart);
  return chart;
}

const param = (step: string) => ({ step });

/** At most one step runs at a time: no step's `next` takes two arcs at once (DESIGN.md's DSL: an exclusive fork takes the first that holds). */
function oneStepAtATime(pb: NormalizedPlaybook): boolean {
  return pb.workflow.every((s) => s.next.mode === 'exclusive' || s.next.arcs.length <= 1);
}

function arcTransition(a: Incoming, to: string, target: string | undefined, actions: ActionRef | ActionRef[], again: boolean): TransitionJson {
  return {
    ...(target !== undefined ? { target } : {}),
    guard: { type: 'arc', params: { ...a } },
    actions,
    meta: { from: a.from, arc: a.index, fork: a.mode, ...(a.when !== undefined ? { when: a.when } : {}) },
    description: `${a.from} → ${to} ${a.when !== undefined ? `when ${a.when}` : `when ${a.from} succeeded`}${a.mode === 'inclusive' ? ' (inclusive fork: every arc that holds)' : ' (exclusive: the first arc that holds)'}${again ? `; ${to} is already running: another run` : ''}`,
  };
}

/** The arcs into a step's region: from `idle`, `completed` and `failed` they enter `active`; in `active` they start another run. */
function arcsInto(name: string, arcs: Incoming[], intoActive: boolean): TransitionJson[] {
  return arcs.map((a) => {
    const take = { type: 'takeArc', params: { from: a.from, index: a.index } };
    return intoActive ? arcTransition(a, name, 'active', take, false) : arcTransition(a, name, undefined, [take, { type: 'startRun', params: param(name) }], true);
  });
}

/** How a run of the step ends: to completed or failed when it was the step's only run. */
function runEnds(name: string, alsoWhileAnotherRuns: boolean): TransitionJson[] {
  const exit = { type: 'exitRun', params: param(name) };
  return [
    { target: 'completed', guard: { type: 'runEnded', params: { step: name, status: 'ok', last: true } }, actions: exit, description: `${name} succeeded` },
    { target: 'failed', guard: { type: 'runEnded', params: { step: name, status: 'error', last: true } }, actions: exit, description: `${name} ended in error` },
    ...(alsoWhileAnotherRuns ? [{ guard: { type: 'runEnded', params: { step: name, last: false } }, actions: exit, description: `a run of ${name} ended; another still runs` }] : []),
  ];
}

/** What follows a run of the step that ended and fires no arc (lowest priority: after its arcs). */
function routeEnds(name: string): TransitionJson[] {
  return [
    { guard: { type: 'arcError', params: param(name) }, actions: { type: 'failArc', params: param(name) }, description: `a when or set of ${name}'s arcs failed to render: the execution fails` },
    { guard: { type: 'unhandledFailure', params: param(name) }, actions: { type: 'failUnhandled', params: param(name) }, description: `${name} failed and no arc matched: the execution fails` },
    { guard: { type: 'routed', params: param(name) }, actions: { type: 'dropRoute', params: param(name) }, description: `${name} succeeded and no arc fires: its branch ends here` },
  ];
}

const stepMeta = (step: NormalizedStep) => ({ step: step.step, next: step.next.mode, tasks: step.tasks.map((t) => ({ name: t.name, kind: t.kind, retry: t.retry })) });
const entryTransition: TransitionJson = { target: 'active', guard: 'entry', meta: { entry: true }, description: 'entry step' };

function stepRegion(step: NormalizedStep, isEntry: boolean, arcs: Incoming[]): StateNodeJson {
  const name = step.step;
  const enter = arcsInto(name, arcs, true);
  if (isEntry) enter.unshift(entryTransition);
  return {
    meta: stepMeta(step),
    ...(step.desc ? { description: step.desc } : {}),
    initial: 'idle',
    // Lowest priority in the region: the arcs of a run of this step that ended.
    always: routeEnds(name),
    states: {
      idle: { always: enter },
      active: activeState(step, [...runEnds(name, true), ...arcsInto(name, arcs, false)]),
      completed: { always: arcsInto(name, arcs, true), meta: { step: name, status: 'completed' } },
      failed: { always: arcsInto(name, arcs, true), meta: { step: name, status: 'failed' } },
    },
  };
}

// A step's state id in a sequence, what arcs target (`#step-<index>.active`): step names are any
// string, and a `.` or `#` in one would be read as a path.
const sequenceId = (index: number) => `step-${index}`;

/** A step of a playbook run one step at a time: entered by its `active`; its arcs leave it for the next step's. */
function sequenceStep(pb: NormalizedPlaybook, step: NormalizedStep, index: number, indexOf: ReadonlyMap<string, number>): StateNodeJson {
  const name = step.step;
  const isEntry = name === pb.entry;
  const arcsOut = step.next.arcs.map((arc, i) =>
    arcTransition({ from: name, index: i, ...(arc.when !== undefined ? { when: arc.when } : {}), mode: step.next.mode }, arc.step, `#${sequenceId(indexOf.get(arc.step) ?? -1)}.active`, { type: 'takeArc', params: { from: name, index: i } }, false),
  );
  return {
    id: sequenceId(index),
    meta: stepMeta(step),
    ...(step.desc ? { description: step.desc } : {}),
    // Only the entry step waits to start (for its admission); any other is entered running.
    initial: isEntry ? 'idle' : 'active',
    always: [...arcsOut, ...routeEnds(name)],
    states: {
      ...(isEntry ? { idle: { always: [entryTransition] } } : {}),
      active: activeState(step, runEnds(name, false)),
      completed: { meta: { step: name, status: 'completed' } },
      failed: { meta: { step: name, status: 'failed' } },
    },
  };
}

function waitNote(wait: WaitSpec): string {
  if (wait.kind === 'timer') return `waits ${wait.until !== undefined ? `until ${wait.until}` : `${wait.forMs} ms`}, holding no worker (timer.fired)`;
  const from = wait.roles ? ` from ${wait.roles.join(' or ')}` : '';
  const timeout = wait.timeoutMs === null ? '' : `; after ${wait.timeoutMs} ms its outcome is timeout (wait.timed_out)`;
  return `waits for signal ${wait.signal}${from} (signal.received)${timeout}${wait.buffer ? '; a signal sent earlier is kept for it' : ''}`;
}

function activeState(step: NormalizedStep, always: TransitionJson[]): StateNodeJson {
  const children = step.tasks.filter((t) => t.kind === 'playbook').map((t) => ({ task: t.name, path: (t as { path?: unknown }).path }));
  const retries = step.tasks.filter((t) => t.retry.attempts > 1).map((t) => `${t.name} up to ${t.retry.attempts} attempts`);
  const wait = step.wait;
  const notes = [
    ...(wait ? [waitNote(wait)] : []),
    ...(children.length ? [`waits for child playbook ${children.map((c) => String(c.path)).join(', ')} (child.finished)`] : []),
    ...(retries.length ? [`retries: ${retries.join('; ')} (run by the worker inside one command)`] : []),
  ];
  const node: StateNodeJson = {
    meta: { step: step.step, ...(wait ? { wait } : {}), ...(children.length ? { children } : {}), ...(retries.length ? { retries } : {}) },
    ...(notes.length ? { description: notes.join('. ') } : {}),
    entry: { type: 'startRun', params: param(step.step) },
    always,
  };
  if (!step.loop) return node;
  const loop = { in: step.loop.in, iterator: step.loop.iterator ?? 'item', mode: step.loop.mode ?? 'sequential', ...(step.loop.max_in_flight ? { max_in_flight: step.loop.max_in_flight } : {}) };
  return {
    ...node,
    initial: 'iterating',
    states: {
      iterating: {
        meta: { loop },
        description: `${loop.mode} loop over ${typeof loop.in === 'string' ? loop.in : JSON.stringify(loop.in)} as ${loop.iterator}${loop.mode === 'parallel' ? `, at most ${loop.max_in_flight ?? 'all'} in flight` : ', one at a time'}; stops at the first failed item`,
        always: [
          { guard: { type: 'loopHasRoom', params: param(step.step) }, actions: { type: 'launchItems', params: param(step.step) }, description: 'launch items while fewer than the limit are in flight and none failed' },
          { guard: { type: 'loopDone', params: param(step.step) }, actions: { type: 'endLoop', params: param(step.step) }, description: 'every item done, or one failed and none in flight: the run ends (loop.done)' },
        ],
      },
    },
  };
}
