import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { getSimplePaths } from 'xstate/graph';
import { parsePlaybook, type NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { createExecutionMachine, type ExecutionMachine } from './execution.machine.ts';
import { executionView, type StepView } from './execution-view.ts';
import { topStateOf } from './execution/step-phase.ts';
import { segmentsOf } from './execution/segments.ts';
import type { Effect, ExecutionEvent, ExecutionInput, TaskOutcome } from './execution/types.ts';

// Runs a playbook's compiled statechart with no database and no workers: every command a step
// issues is answered at once with the outcome chosen for that step (ok unless told otherwise).

type Snapshot = SnapshotFrom<ExecutionMachine>;
type Outcome = 'ok' | 'error';

/** Outcomes per step name: one for every command of the step, or a list used in turn (the last repeats). */
export type SimulatedOutcomes = Record<string, Outcome | Outcome[]>;

export type SimulationResult = {
  status: string;
  /** Steps in the order they were entered (a loop step once per run, not per item). */
  path: string[];
  steps: Record<string, StepView>;
  error: { message: string; code?: string; step?: string } | null;
  /** Commands answered (a loop issues one per item). */
  commands: number;
  /** With `pauseWhenUndecided`: the steps whose next command has no outcome yet (empty once ended). */
  waiting?: string[];
};

/** Events answered before a simulation gives up (a playbook cycling forever). */
export const MAX_SIMULATED_COMMANDS = 10_000;
/** --paths cuts a path once it has run this many steps per step of the playbook (cycles are cut there). */
export const MAX_PATH_RUNS_PER_STEP = 5;
/** States --paths explores at most (xstate/graph enumerates simple paths in O(states²)). */
export const MAX_PATH_STATES = 2_000;

/** The step runs after which --paths cuts a path of this playbook. */
export const pathDepthOf = (pb: NormalizedPlaybook): number => MAX_PATH_RUNS_PER_STEP * pb.workflow.length;

const machines = new WeakMap<NormalizedPlaybook, ExecutionMachine>();

function machineOf(pb: NormalizedPlaybook): ExecutionMachine {
  let m = machines.get(pb);
  if (!m) machines.set(pb, (m = createExecutionMachine(pb)));
  return m;
}

/** Parses playbook YAML or throws an Error listing its problems. */
export function playbookFromYaml(yaml: string): NormalizedPlaybook {
  const parsed = parsePlaybook(yaml);
  if (!parsed.ok) throw new Error(`invalid playbook: ${parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  return parsed.playbook;
}

function inputOf(pb: NormalizedPlaybook, payload: Record<string, unknown>): ExecutionInput {
  return { executionId: 1, catalogId: 0, path: pb.metadata.path ?? pb.metadata.name ?? 'simulated', parentExecutionId: null, parentSeq: null, rootExecutionId: 1, workload: { ...pb.workload, ...payload }, args: payload };
}

/** The event that answers a pending command with an outcome: every task ok, or the last one failed. */
function answer(pb: NormalizedPlaybook, snap: Snapshot, seq: number, outcome: Outcome): ExecutionEvent {
  const c = snap.context;
  const p = c.pending[seq];
  const run = c.runs[p.run];
  const step = pb.workflow.find((s) => s.step === run.step)!;
  const segment = segmentsOf(step)[run.iterations[p.iteration].segment];
  if (p.kind === 'child') {
    return outcome === 'ok'
      ? { type: 'child.finished', seq, child_execution_id: 0, status: 'completed', result: null, error: null }
      : { type: 'child.finished', seq, child_execution_id: 0, status: 'failed', result: null, error: { message: 'simulated failure', code: 'simulated' } };
  }
  const tasks: Record<string, TaskOutcome> = {};
  segment.tasks.forEach((t, i) => {
    tasks[t.name] = outcome === 'error' && i === segment.tasks.length - 1 ? { status: 'error', data: null, error: { message: 'simulated failure', code: 'simulated' } } : { status: 'ok', data: null };
  });
  return { type: 'command.completed', seq, tasks };
}

const entered = (effects: Effect[]): string[] => effects.flatMap((e) => (e.type === 'record' && e.eventType === 'step.enter' && e.step ? [e.step] : []));
const effectsOf = (actions: readonly { type: string; params?: unknown }[]): Effect[] => actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : []));

/**
 * Runs a playbook (YAML text or parsed) to its end with the given outcomes per step (default ok),
 * answering pending commands oldest first; returns the steps entered in order and the end state.
 */
/**
 * With `pauseWhenUndecided` a step with no outcome left (absent, or its list used up) is not
 * answered: the run stops there with `waiting` set, so a person can choose step by step (the GUI).
 */
export function simulatePlaybook(
  playbook: string | NormalizedPlaybook,
  outcomes: SimulatedOutcomes = {},
  opts: { payload?: Record<string, unknown>; pauseWhenUndecided?: boolean } = {},
): SimulationResult {
  const pb = typeof playbook === 'string' ? playbookFromYaml(playbook) : playbook;
  const machine = machineOf(pb);
  let [snap, actions] = initialTransition(machine, inputOf(pb, opts.payload ?? {}));
  const path = entered(effectsOf(actions));
  const used = new Map<string, number>();
  let before: Snapshot | null = null;
  let commands = 0;
  while (snap.status !== 'done') {
    const seq = Math.min(...Object.keys(snap.context.pending).map(Number));
    if (!Number.isFinite(seq) || commands >= MAX_SIMULATED_COMMANDS) break;
    const step = snap.context.runs[snap.context.pending[seq].run].step;
    const n = used.get(step) ?? 0;
    const decided = outcomes[step];
    if (opts.pauseWhenUndecided && (decided === undefined || (Array.isArray(decided) && n >= decided.length))) break;
    const chosen = decided ?? 'ok';
    used.set(step, n + 1);
    const outcome = Array.isArray(chosen) ? (chosen[Math.min(n, chosen.length - 1)] ?? 'ok') : chosen;
    before = snap;
    [snap, actions] = transition(machine, snap, answer(pb, snap, seq, outcome));
    commands++;
    path.push(...entered(effectsOf(actions)));
  }
  const view = executionView(pb, snap, snap.status === 'done' ? before : null);
  const f = snap.context.finished;
  const result: SimulationResult = { status: topStateOf(snap.value), path, steps: view.steps, error: f?.error ?? null, commands };
  if (opts.pauseWhenUndecided) {
    const pending = snap.status === 'done' ? [] : Object.values(snap.context.pending).map((p) => snap.context.runs[p.run].step);
    result.waiting = [...new Set(pending)];
  }
  return result;
}

export type SimulatedPath = { status: string; path: string[]; outcomes: { step: string; outcome: Outcome }[]; cut: boolean };
export type PathsReport = { paths: SimulatedPath[]; unreachable: string[]; truncated: boolean };

/**
 * Every simple path of the playbook's machine (xstate/graph) where each command, oldest first,
 * ends ok or error; a path is cut after pathDepthOf(pb) step runs. Also names the steps no
 * path enters. `truncated` when the state space passed MAX_PATH_STATES (the lists are then partial).
 */
export function playbookPaths(playbook: string | NormalizedPlaybook, opts: { payload?: Record<string, unknown> } = {}): PathsReport {
  const pb = typeof playbook === 'string' ? playbookFromYaml(playbook) : playbook;
  const machine = machineOf(pb);
  const input = inputOf(pb, opts.payload ?? {});
  const depth = pathDepthOf(pb);
  const cut = (s: Snapshot) => s.status !== 'done' && s.context.nextRun > depth;
  // A budget of explored states: past it, states offer no events (their paths end there, cut).
  let explored = 0;
  let truncated = false;
  const events = (s: Snapshot): ExecutionEvent[] => {
    if (s.status === 'done' || cut(s)) return [];
    if (++explored > MAX_PATH_STATES) {
      truncated = true;
      return [];
    }
    const seq = Math.min(...Object.keys(s.context.pending).map(Number));
    if (!Number.isFinite(seq)) return [];
    return [answer(pb, s, seq, 'ok'), answer(pb, s, seq, 'error')];
  };
  const serializeState = (s: Snapshot) => JSON.stringify([s.value, s.context]);
  const ends = new Set<string>();
  const found = getSimplePaths(machine, {
    input,
    events: (s) => {
      const out = events(s);
      if (out.length === 0) ends.add(serializeState(s));
      return out;
    },
    serializeState,
  }).filter((p) => ends.has(serializeState(p.state)));
  const reached = new Set<string>();
  const paths: SimulatedPath[] = [];
  for (const p of found) {
    let [snap, actions] = initialTransition(machine, input);
    const stepPath = entered(effectsOf(actions));
    const chosen: SimulatedPath['outcomes'] = [];
    for (const s of p.steps) {
      const ev = s.event;
      if (ev.type !== 'command.completed' && ev.type !== 'child.finished') continue;
      const step = snap.context.runs[snap.context.pending[ev.seq].run].step;
      const failed = ev.type === 'child.finished' ? ev.status !== 'completed' : Object.values(ev.tasks).some((t) => t.status === 'error');
      chosen.push({ step, outcome: failed ? 'error' : 'ok' });
      [snap, actions] = transition(machine, snap, ev);
      stepPath.push(...entered(effectsOf(actions)));
    }
    for (const s of stepPath) reached.add(s);
    paths.push({ status: topStateOf(snap.value), path: stepPath, outcomes: chosen, cut: snap.status !== 'done' });
  }
  return { paths, unreachable: truncated ? [] : pb.workflow.map((s) => s.step).filter((s) => !reached.has(s)), truncated };
}

/**
 * Warnings for registration: steps no simulated path enters, and paths that end neither
 * completed nor failed (cut after pathDepthOf(pb) step runs: a cycle that may not end).
 */
export function playbookWarnings(pb: NormalizedPlaybook): string[] {
  const report = playbookPaths(pb);
  const out: string[] = [];
  for (const s of report.unreachable) out.push(`workflow.${s}: no path reaches step ${s} (every command simulated ok or error)`);
  const open = report.paths.filter((p) => p.status !== 'completed' && p.status !== 'failed');
  if (open.length && !report.truncated) out.push(`workflow: ${open.length} path(s) end neither completed nor failed, e.g. ${open[0].path.join(' → ')}${open[0].cut ? ` (cut after ${pathDepthOf(pb)} step runs: a cycle that may not end)` : ''}`);
  if (report.truncated) out.push(`workflow: more than ${MAX_PATH_STATES} states; paths were not all checked`);
  return out;
}
