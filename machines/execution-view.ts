import type { NormalizedPlaybook, NormalizedStep } from '../src/dsl/parse-playbook.ts';
import { executionStatusOf, lastOutcome, stepPhase } from './execution/step-phase.ts';
import { isLiveExecutionStatus } from './statuses.ts';
import type { ExecutionContext } from './execution/types.ts';
import { keyOf } from './execution/keys.ts';
import { segmentsOf } from './execution/segments.ts';

/** `waiting`: active, and waiting for a time or a signal (no worker holds it). */
export type StepStatus = 'pending' | 'active' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled';

export type StepView = {
  status: StepStatus;
  /** Loop progress while the step runs: items, done, in flight. */
  loop?: { length: number; done: number; in_flight: number; mode: 'sequential' | 'parallel'; max_in_flight: number };
  /** How the step's last run ended (its error message only: results stay in the event log). */
  outcome?: { status: 'ok' | 'error' | 'timeout'; error: { message: string; code?: string } | null };
  /**
   * What a waiting step waits for (its wake-up time is in its wait row: GET /api/executions/{id}
   * `waits`): its own `wait`, or (`for: retry`) the delay before its `playbook` task's next attempt.
   */
  wait?: { kind: 'timer' | 'signal'; signal: string | null; approval_roles: string[] | null; for?: 'retry'; task?: string; attempt?: number };
  /** Its commands and child starts decided while the execution is paused: held, issued once resumed. */
  held?: number;
  /** Of `held`, the child executions (a `playbook` task's) to be started once resumed; absent: none. */
  held_children?: number;
  /** How many of its runs took the outcome its execution's `retry_of` recorded instead of running (`step.replayed`); absent: none. */
  replayed?: number;
};

export type ExecutionView = {
  status: string;
  value: unknown;
  active_steps: string[];
  steps: Record<string, StepView>;
  pending_commands: number;
};

type SnapshotLike = { value: unknown; context: ExecutionContext };

/**
 * The live view of an execution's snapshot: the state value (machines/playbook-statechart.ts), the active
 * steps, each step's status and loop progress. `beforeEnd` is the snapshot just before a
 * terminal transition: steps active then and never finished are `cancelled`. No values of the
 * payload, vars or results are copied, so no secret a playbook handles can appear in it.
 */
export function executionView(pb: NormalizedPlaybook, snap: SnapshotLike, beforeEnd: SnapshotLike | null): ExecutionView {
  const ctx = snap.context;
  const status = executionStatusOf(snap);
  const running = isLiveExecutionStatus(status);
  const steps: Record<string, StepView> = {};
  const active: string[] = [];
  for (const s of pb.workflow) {
    // An ended execution's value names no step: its steps are where their outcomes left them.
    const phase = stepPhase(snap, s.step);
    let st: StepStatus;
    if (phase === 'active') st = 'active';
    // Active just before the end and no outcome since: the end cut it short.
    else if (!running && beforeEnd && stepPhase(beforeEnd, s.step) === 'active' && lastOutcome(ctx.steps, s.step) === lastOutcome(beforeEnd.context.steps, s.step)) st = 'cancelled';
    else if (phase === 'idle') st = running ? 'pending' : 'skipped';
    else st = phase;
    const view: StepView = { status: st };
    const o = lastOutcome(ctx.steps, s.step);
    if (o) view.outcome = { status: o.status, error: o.error ? { message: o.error.message, ...(o.error.code ? { code: o.error.code } : {}) } : null };
    // Without it a replayed step read `completed ok` as one that ran here: its tasks ran in the execution retried.
    const replayed = replayedRuns(ctx, s.step);
    if (replayed) view.replayed = replayed;
    if (st === 'active' && s.wait && waitingIn(ctx, s.step)) {
      st = 'waiting';
      view.status = st;
      view.wait = { kind: s.wait.kind, signal: s.wait.kind === 'signal' ? s.wait.signal : null, approval_roles: s.wait.kind === 'signal' ? s.wait.roles : null };
    }
    // A `playbook` task between attempts runs nothing: it waits for its retry. (Under its timeout
    // timer its child runs: active.)
    const retry = st === 'active' && !s.wait ? retryAwaited(ctx, s) : null;
    if (retry) {
      st = 'waiting';
      view.status = st;
      view.wait = { kind: 'timer', signal: null, approval_roles: null, for: 'retry', ...retry };
    }
    if (st === 'active' || st === 'waiting') {
      active.push(s.step);
      // Active, yet nothing of it runs: the pause holds what it decided (Draft.emit), not issued.
      const held = ctx.held.filter((e) => (e.type === 'issueCommand' || e.type === 'startChild') && e.step === s.step);
      if (held.length) view.held = held.length;
      // A child start is no command: said apart, as what the resume starts.
      const children = held.filter((e) => e.type === 'startChild').length;
      if (children) view.held_children = children;
      const run = Object.values(ctx.runs).find((r) => r.step === s.step && r.loop);
      if (run?.loop) {
        const l = run.loop;
        view.loop = { length: l.items.length, done: l.done, in_flight: Object.keys(run.iterations).length, mode: l.parallel ? 'parallel' : 'sequential', max_in_flight: l.maxInFlight };
      }
    }
    steps[s.step] = view;
  }
  return { status, value: snap.value, active_steps: active, steps, pending_commands: Object.values(ctx.pending).filter((p) => p.kind !== 'wait').length };
}

/**
 * The task and attempt a step waits to retry, when all that its runs have pending is the delay
 * of a `playbook` task's `retry` (between attempts); null when anything else of it is pending.
 * Of several (a loop's items), the first pending: the lowest seq, as GET …/state's `wake_at`.
 */
function retryAwaited(ctx: ExecutionContext, step: NormalizedStep): { task: string; attempt: number } | null {
  let found: { task: string; attempt: number } | null = null;
  for (const p of Object.values(ctx.pending)) {
    const run = ctx.runs[keyOf(p.run)];
    if (run?.step !== step.step) continue;
    if (p.kind !== 'wait' || !p.retry) return null;
    const it = run.iterations[p.iteration];
    const task = it && segmentsOf(step)[it.segment]?.tasks[0];
    if (!task) return null;
    found ??= { task: task.name, attempt: it.attempt ?? 1 };
  }
  return found;
}

/**
 * How many runs of the step took a retry's recorded outcome (machines/execution/actions.ts
 * takeReplayed): those taken of its list; of one outcome alone (logs before the list), its first
 * run, once the step completed.
 */
function replayedRuns(ctx: ExecutionContext, step: string): number {
  const replay = ctx.input.replay;
  const recorded = replay && Object.hasOwn(replay, step) ? replay[step] : undefined;
  if (!recorded) return 0;
  if (!Array.isArray(recorded)) return ctx.completedSteps.includes(step) ? 1 : 0;
  const taken = ctx.replayTaken;
  return taken && Object.hasOwn(taken, step) ? taken[step] : 0;
}

/** Whether a run of the step waits (a pending wait of one of its runs). */
function waitingIn(ctx: ExecutionContext, step: string): boolean {
  return Object.values(ctx.pending).some((p) => p.kind === 'wait' && ctx.runs[keyOf(p.run)]?.step === step);
}
