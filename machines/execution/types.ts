import type { KeychainDefinition, NormalizedTask } from '../../src/dsl/parse-playbook.ts';
import type { EVENT, EventType } from '../event-types.ts';

export type TaskError = { message: string; code?: string };
export type TaskOutcome = { status: 'ok' | 'error'; data: unknown; error?: TaskError };
export type StepOutcome = { status: 'ok' | 'error'; result: unknown; error: TaskError | null; tasks: Record<string, TaskOutcome> };

/** What an execution starts from; recorded in its `execution.started` event so a replay can begin again. */
export type ExecutionInput = {
  executionId: number;
  catalogId: number;
  path: string;
  parentExecutionId: number | null;
  /** The parent's command seq this execution answers (child executions only). */
  parentSeq: number | null;
  rootExecutionId: number;
  /** The playbook's workload with the request payload merged in. */
  workload: Record<string, unknown>;
  /** The request payload (for a child: the rendered `args`). */
  args: Record<string, unknown>;
  /**
   * A retry's recorded outcomes: the first run of each of these steps takes its outcome from here
   * (event `step.replayed`) instead of running (POST /api/executions/{id}/retry).
   */
  replay?: Record<string, StepOutcome>;
};

/** One run of a step body: the single run of a plain step, or one item of a loop. */
export type Iteration = {
  index: number | null;
  item?: unknown;
  /** Index into the step's segments (runs of worker tasks, or one playbook task). */
  segment: number;
  tasks: Record<string, TaskOutcome>;
  seq: number;
};

export type LoopState = {
  items: unknown[];
  iterator: string;
  parallel: boolean;
  maxInFlight: number;
  next: number;
  done: number;
  /** Per-item results in chunks (machines/execution/loop-results.ts). */
  results: unknown[][];
  failed: TaskError | null;
};

export type StepRun = {
  id: number;
  step: string;
  loop: LoopState | null;
  iterations: Record<string, Iteration>;
  lastTasks: Record<string, TaskOutcome>;
  /** Set when the run's work is over; the step's region then leaves `active` (exitRun). */
  outcome?: StepOutcome;
};

/**
 * A run that ended and whose `next` arcs are being followed: the arcs' guards read `scope` (the
 * template context when the run ended, with its `outcome`); `taken` lists the arcs already taken.
 * Routes live only inside one transition: every one is dropped before the machine rests.
 */
export type Route = { run: number; step: string; outcome: StepOutcome; scope: Record<string, unknown>; taken: number[] };

export type PendingCommand = { run: number; iteration: string; kind: 'worker' | 'child' };

export type Finished = { status: 'completed' | 'failed' | 'cancelled'; result: unknown; error: TaskError & { step?: string } | null };

export type ExecutionContext = {
  input: ExecutionInput;
  vars: Record<string, unknown>;
  steps: Record<string, StepOutcome>;
  runs: Record<string, StepRun>;
  pending: Record<string, PendingCommand>;
  nextSeq: number;
  nextRun: number;
  completedSteps: string[];
  lastResult: unknown;
  finished: Finished | null;
  /** Ended runs whose arcs are being followed (empty between events). */
  routes: Route[];
  /** Steps entered since the last input event (a cycle of steps without tasks is cut at a limit). */
  immediate: number;
};

/** The render context a worker gets with a command (keychain is added by the worker only). */
export type RenderContext = Record<string, unknown>;

/** Effects returned by transition(); the actor performs them after persisting the snapshot. */
export type Effect =
  | {
      type: 'issueCommand';
      seq: number;
      step: string;
      loopIndex: number | null;
      tasks: NormalizedTask[];
      context: RenderContext;
      keychain: KeychainDefinition[];
    }
  | { type: 'startChild'; seq: number; step: string; task: string; path: string; args: Record<string, unknown> }
  | { type: 'cancelCommands'; seqs: number[] }
  | { type: 'cancelChildren' }
  | { type: 'record'; eventType: EventType; step?: string; context?: Record<string, unknown>; result?: unknown; error?: unknown }
  | { type: 'finish'; finished: Finished };

/** Input events: the ones that move an execution. Every other event type is a record and folds to nothing. */
export type ExecutionEvent =
  | { type: typeof EVENT.commandCompleted; seq: number; tasks: Record<string, TaskOutcome> }
  | { type: typeof EVENT.commandFailed; seq: number; error: TaskError; tasks?: Record<string, TaskOutcome> }
  | { type: typeof EVENT.childFinished; seq: number; child_execution_id: number; status: 'completed' | 'failed' | 'cancelled'; result: unknown; error: TaskError | null }
  | { type: typeof EVENT.executionCancelled; reason: string; cancelled_at: string };
