import type { Role } from '../../src/auth/roles.ts';
import type { KeychainDefinition, NormalizedTask } from '../../src/dsl/parse-playbook.ts';
import type { EVENT, EventType } from '../event-types.ts';
import type { IterationKey, NumberKey } from './keys.ts';

export type TaskError = { message: string; code?: string };
export type TaskOutcome = { status: 'ok' | 'error'; data: unknown; error?: TaskError };
/** A signal sent to an execution: its name, payload and who sent it (`signal.payload`, `signal.by` in the templates of its step's arcs). */
/**
 * A signal sent to the execution. `role`: its sender's (null: none), present on signals recorded
 * since kept ones are taken only by steps that admit their sender; absent in older logs.
 */
export type SignalSent = { name: string; payload: unknown; by: string | null; role?: Role | null };

/**
 * How a run of a step ended; `timeout` when it waited for a signal that did not come in time.
 * `signal`: the signal that ended a waiting step.
 */
export type StepOutcome = { status: 'ok' | 'error' | 'timeout'; result: unknown; error: TaskError | null; tasks: Record<string, TaskOutcome>; signal?: SignalSent };

/** What an execution starts from; recorded in its `execution.started` event so a replay can begin again. */
export type ExecutionInput = {
  executionId: number;
  catalogId: number;
  path: string;
  parentExecutionId: number | null;
  /** The parent's command seq this execution answers (child executions only). */
  parentSeq: number | null;
  rootExecutionId: number;
  /** How many parents it has (a child of a root is 1); absent for a root. */
  depth?: number;
  /** The playbook's workload with the request payload merged in. */
  workload: Record<string, unknown>;
  /** The request payload (for a child: the rendered `args`). */
  args: Record<string, unknown>;
  /**
   * A retry's recorded outcomes (POST /api/executions/{id}/retry): a step's runs take them in
   * order, one each (event `step.replayed`), instead of running, as its runs before the retried
   * step did in the old execution (a cycle of steps ran it several times); runs past them run.
   * One outcome alone (logs written before the list) is its first run's, taken unless it ran.
   */
  replay?: Record<string, StepOutcome | StepOutcome[]>;
  /**
   * Signals the execution it succeeds (a retry's, auto-resume's restart's) had kept for steps that
   * had not taken them yet (`buffer: true`): kept here from its start, as if sent to it. Absent: none.
   */
  signals?: Record<string, SignalSent[]>;
  /**
   * Whether its `playbook` tasks have their own timers (`timeout_seconds`, `retry`'s delay: each a
   * seq of its own). Starts record true. false: a log written before they had them (d064124), whose
   * later seqs count none, folded as it was written (actors/child-task-timers.ts decides it for a
   * start recorded without the field). Absent: true.
   */
  childTaskTimers?: boolean;
  /** Taken first at the claim (0..9): the playbook's `priority`, or the start's. Absent: 5. */
  priority?: number;
  /** Set when the execution waits to be admitted (flow control): it starts `queued`, unless admitted at its start. */
  admission?: Admission;
};

/**
 * Why a new execution waits before its entry step: a concurrency limit's key (`limit` named, or
 * `@<path>` with `capacity` for a playbook's inline `limit: N`) and/or a debounce window of
 * `debounce.seconds` whose later starts with the same key replace its payload. `admitted`: its
 * key had room at its start, which took the slot: it never waits (no `execution.admitted` comes).
 */
export type Admission = {
  limit: string | null;
  key: string | null;
  capacity: number | null;
  debounce: { key: string; seconds: number } | null;
  admitted?: true;
};

/** One run of a step body: the single run of a plain step, or one item of a loop. */
export type Iteration = {
  index: number | null;
  item?: unknown;
  /** Index into the step's segments (runs of worker tasks, or one playbook task). */
  segment: number;
  tasks: Record<string, TaskOutcome>;
  seq: number;
  /** A `playbook` task's attempt (its `retry`): absent, the first. */
  attempt?: number;
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
  /** By iterationKey (machines/execution/keys.ts). */
  iterations: Record<string, Iteration>;
  lastTasks: Record<string, TaskOutcome>;
  /** Set when the run's work is over; the step's region then leaves `active` (exitRun). */
  outcome?: StepOutcome;
  /**
   * Its wait ended as it began, under no seq (startWait): it took a signal kept from before
   * (`kept_signal`), or its `until` did not render to a time (`until_failed`). Its step.exit
   * says so (context `at_once`), the one record of that run's wait.
   */
  atOnce?: WaitEndedAtOnce;
};

export type WaitEndedAtOnce = 'kept_signal' | 'until_failed';

/**
 * A run that ended and whose `next` arcs are being followed: the arcs' guards read `scope` (the
 * template context when the run ended, with its `outcome`); `taken` lists the arcs already taken.
 * Routes live only inside one transition: every one is dropped before the machine rests.
 */
export type Route = { run: number; step: string; outcome: StepOutcome; scope: Record<string, unknown>; taken: number[] };

/**
 * What a run waits for under a seq: a worker's command, a child execution, or a wait (a timer or a
 * signal, `signal` naming it). A `playbook` task's timers are waits too, not the step's own:
 * `child` names the child seq a `timeout_seconds` timer bounds (the child's entry names it back in
 * `timer`), `retry` marks the delay before the task's next attempt.
 */
export type PendingCommand = { run: number; iteration: IterationKey; kind: 'worker' | 'child' | 'wait'; signal?: string; timer?: number; child?: number; retry?: true };

export type Finished = { status: 'completed' | 'failed' | 'cancelled'; result: unknown; error: TaskError & { step?: string } | null };

export type ExecutionContext = {
  input: ExecutionInput;
  vars: Record<string, unknown>;
  steps: Record<string, StepOutcome>;
  /** By run id (machines/execution/keys.ts). */
  runs: Record<NumberKey, StepRun>;
  /** By seq. */
  pending: Record<NumberKey, PendingCommand>;
  nextSeq: number;
  nextRun: number;
  completedSteps: string[];
  lastResult: unknown;
  finished: Finished | null;
  /** Ended runs whose arcs are being followed (empty between events). */
  routes: Route[];
  /** Steps entered since the last input event (a cycle of steps without tasks is cut at a limit). */
  immediate: number;
  /** Paused (execution.paused): commands and children are held in `held` until execution.resumed. */
  paused: boolean;
  /** Commands and child starts decided while paused, issued in order on resume. */
  held: Effect[];
  /** Signals sent before a step waited for them, by name, oldest first (steps with `buffer: true`). */
  signals: Record<string, SignalSent[]>;
  /** Not admitted yet (ExecutionInput.admission): no step is entered until execution.admitted. */
  queued: boolean;
  /** How many of each step's recorded outcomes (ExecutionInput.replay, a list) its runs took; absent: none yet. */
  replayTaken?: Record<string, number>;
};

/** The render context a worker gets with a command (keychain is added by the worker only). */
export type RenderContext = Record<string, unknown>;

/** Effects returned by transition(); the actor performs them after persisting the snapshot. */
export type Effect =
  | {
      type: 'issueCommand';
      seq: number;
      /** Claimed first (0..9). */
      priority: number;
      /** The task's `limit` with its key rendered: the command waits for room on it. */
      limit: { name: string; key: string } | null;
      step: string;
      loopIndex: number | null;
      tasks: NormalizedTask[];
      context: RenderContext;
      keychain: KeychainDefinition[];
    }
  /** `attempt`: the task's attempt under its `retry` (absent: the first); `loopIndex`: its loop item (absent outside a loop). */
  | { type: 'startChild'; seq: number; step: string; task: string; path: string; args: Record<string, unknown>; attempt?: number; loopIndex?: number }
  | { type: 'cancelCommands'; seqs: number[] }
  /** `requestedBy`: who asked for the cancel that cascades (absent: the execution failed, or no one was named). */
  | { type: 'cancelChildren'; requestedBy?: Record<string, unknown> }
  /** The one child execution started under `seq` is cancelled (a `playbook` task's timeout), `reason` saying why. */
  | { type: 'cancelChild'; seq: number; reason: string }
  /**
   * A step waits under `seq`: until `wakeAt` (ISO) or `afterMs` from now (a timer), or for a signal
   * timing out after `afterMs` (null: never). `purpose`: a `playbook` task's timer (its timeout or
   * its retry's delay), not the step's wait.
   */
  | { type: 'wait'; seq: number; step: string; kind: 'timer' | 'signal'; signal: string | null; wakeAt: string | null; afterMs: number | null; roles: string[] | null; purpose?: { task: string; for: 'timeout' | 'retry'; attempt: number } }
  /** The waits under these seqs are over (fired, timed out, signalled): their rows go. */
  | { type: 'endWaits'; seqs: number[] }
  | { type: 'record'; eventType: EventType; step?: string; context?: Record<string, unknown>; result?: unknown; error?: unknown }
  | { type: 'finish'; finished: Finished };

/** Input events: the ones that move an execution. Every other event type is a record and folds to nothing. */
export type ExecutionEvent =
  | { type: typeof EVENT.commandCompleted; seq: number; tasks: Record<string, TaskOutcome> }
  | { type: typeof EVENT.commandFailed; seq: number; error: TaskError; tasks?: Record<string, TaskOutcome> }
  | { type: typeof EVENT.childFinished; seq: number; child_execution_id: number | null; status: 'completed' | 'failed' | 'cancelled'; result: unknown; error: TaskError | null }
  | { type: typeof EVENT.executionCancelled; reason: string; cancelled_at: string; /** false: child executions go on (absent: they are cancelled too). */ cascade?: boolean; /** Who asked for it (context requested_by), passed on to the children it cancels. */ requestedBy?: Record<string, unknown> }
  | { type: typeof EVENT.timerFired; seq: number }
  | { type: typeof EVENT.waitTimedOut; seq: number }
  /** `seq`: the waiting step it ends (chosen when it was sent); null: kept for a step that waits later (`buffer`). */
  | { type: typeof EVENT.signalReceived; seq: number | null; signal: SignalSent }
  /**
   * `args`: a debounced execution's payload, the burst's last start's (absent: the one it started
   * with); `flow`: the limit, key and priority it was admitted with, the burst's last start's
   * (absent in logs written before admissions recorded them: those it started with).
   */
  | { type: typeof EVENT.executionAdmitted; args?: Record<string, unknown>; flow?: { limit: string | null; key: string | null; priority: number } }
  | { type: typeof EVENT.executionPaused }
  | { type: typeof EVENT.executionResumed };
