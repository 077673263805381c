// Every event type an execution's log (core.event) holds: who may write it and whether it folds
// (moves the execution machine) or only records. The one place a type is spelt: code names them
// through EVENT, and test/unit/event-types.test.ts fails on a quoted type anywhere else and checks
// the table of docs/architecture.md ("Event types") against this list. Pure: no I/O.

/** Who writes an event into the log: a worker's report, the engine's own fold, batch intake, or an operator's request. */
export type EventWriter = 'worker' | 'engine' | 'intake' | 'operator';

/** What the registry says of one type. */
export type EventTypeInfo = {
  /** Who may write it; a worker may report only the types whose writers include `worker`. */
  readonly writers: readonly EventWriter[];
  /** True when folding it changes the execution machine's state; false: kept for the record only. */
  readonly folds: boolean;
  /** One line: what the event says. */
  readonly meaning: string;
};

/** The event types, by a name for code; the value is what the log stores in `event_type`. */
export const EVENT = {
  executionStarted: 'execution.started',
  commandIssued: 'command.issued',
  commandClaimed: 'command.claimed',
  commandStarted: 'command.started',
  commandHeartbeat: 'command.heartbeat',
  callAttempt: 'call.attempt',
  callDone: 'call.done',
  callError: 'call.error',
  commandCompleted: 'command.completed',
  commandFailed: 'command.failed',
  commandRefused: 'command.refused',
  commandCancelled: 'command.cancelled',
  childStarted: 'child.started',
  childFinished: 'child.finished',
  stepEnter: 'step.enter',
  stepExit: 'step.exit',
  stepReplayed: 'step.replayed',
  loopItem: 'loop.item',
  loopDone: 'loop.done',
  workflowCompleted: 'workflow.completed',
  workflowFailed: 'workflow.failed',
  playbookCompleted: 'playbook.completed',
  playbookFailed: 'playbook.failed',
  executionCancelled: 'execution.cancelled',
  executionPaused: 'execution.paused',
  executionResumed: 'execution.resumed',
  executionQueued: 'execution.queued',
  executionAdmitted: 'execution.admitted',
  timerSet: 'timer.set',
  timerFired: 'timer.fired',
  signalAwaited: 'signal.awaited',
  signalReceived: 'signal.received',
  waitTimedOut: 'wait.timed_out',
  batchAccepted: 'batch.accepted',
  batchCompleted: 'batch.completed',
  batchFailed: 'batch.failed',
} as const;

export type EventType = (typeof EVENT)[keyof typeof EVENT];

// `satisfies` holds this table to EVENT both ways: a type without an entry, or an entry for no
// type, does not compile. `as const` keeps each type's writers literal for the types below.
const INFO = {
  [EVENT.executionStarted]: { writers: ['engine'], folds: true, meaning: 'an execution begins with its input (workload merged with the start payload); the machine starts from it' },
  [EVENT.commandIssued]: { writers: ['engine'], folds: false, meaning: 'a command (one segment of a step, or one loop item) was created for workers to claim' },
  [EVENT.commandClaimed]: { writers: ['engine'], folds: false, meaning: 'a worker claimed a command (recorded with the first report of that claim)' },
  [EVENT.commandStarted]: { writers: ['worker'], folds: false, meaning: 'a worker began running a command' },
  [EVENT.commandHeartbeat]: { writers: ['worker'], folds: false, meaning: 'a worker still runs a command' },
  [EVENT.callAttempt]: { writers: ['worker'], folds: false, meaning: 'an attempt of a task failed and the task was tried again (context `task`, `attempt`, `at`, `duration_ms`; its error; result `output`, capped and masked); of a task retried more than 21 times, the first 10 and the last 10' },
  [EVENT.callDone]: { writers: ['worker'], folds: false, meaning: 'one task of a command succeeded (its outcome)' },
  [EVENT.callError]: { writers: ['worker'], folds: false, meaning: 'one task of a command failed (its outcome)' },
  [EVENT.commandCompleted]: { writers: ['worker'], folds: true, meaning: 'a command ran to its end with every task ok; the step moves on' },
  [EVENT.commandFailed]: { writers: ['worker'], folds: true, meaning: 'a command failed (a task failed, or the worker could not run or report it)' },
  [EVENT.commandRefused]: { writers: ['engine'], folds: false, meaning: 'a report refused (from a superseded attempt, or otherwise not the claim holder\'s), recorded as such, never as a second completion; a batch item refused for any reason, or whose batch failed, at the id reserved for it' },
  [EVENT.commandCancelled]: { writers: ['engine'], folds: false, meaning: 'pending or running commands were cancelled (context `seqs`)' },
  [EVENT.childStarted]: { writers: ['engine'], folds: false, meaning: 'a playbook task started a child execution (context `seq`, `child_execution_id`, `path`, `task`; `attempt` from the second, under its `retry`)' },
  [EVENT.childFinished]: { writers: ['engine'], folds: true, meaning: 'a child execution ended, or none could start (`child_execution_id` null: not found, inputs refused, too deep; then with its step and `task`); its parent\'s step moves on (or, failed, its task\'s `retry` starts another)' },
  [EVENT.stepEnter]: { writers: ['engine'], folds: false, meaning: 'a run of a step began' },
  [EVENT.stepExit]: { writers: ['engine'], folds: false, meaning: 'a run of a step ended (context `status`; `at_once`: its wait ended as it began, `kept_signal` or `until_failed`; its result or error)' },
  [EVENT.stepReplayed]: { writers: ['engine'], folds: false, meaning: 'a run of a step took the outcome its execution\'s `retry_of` (or `resumed_from`: auto-resume\'s successor) recorded instead of running (a retry from a later step)' },
  [EVENT.loopItem]: { writers: ['engine'], folds: false, meaning: 'one item of a loop step began (context `index`)' },
  [EVENT.loopDone]: { writers: ['engine'], folds: false, meaning: 'every item of a loop run ended, or one failed and none is in flight' },
  [EVENT.workflowCompleted]: { writers: ['engine'], folds: false, meaning: 'the workflow ended completed (its result)' },
  [EVENT.workflowFailed]: { writers: ['engine'], folds: false, meaning: 'the workflow ended failed (its error)' },
  [EVENT.playbookCompleted]: { writers: ['engine'], folds: false, meaning: 'the execution ended completed; written after `workflow.completed`' },
  [EVENT.playbookFailed]: { writers: ['engine'], folds: false, meaning: 'the execution ended failed; written after `workflow.failed`' },
  [EVENT.executionCancelled]: { writers: ['operator', 'engine'], folds: true, meaning: 'the execution is cancelled (context `reason`, `cancelled_at`; `requested_by` when asked for, also in the children a cancel took along): by a request, cleanup, or its parent ending' },
  [EVENT.executionPaused]: { writers: ['operator'], folds: true, meaning: 'the execution is paused (context `requested_by`, `reason?`): no command is issued until it is resumed; running ones finish, those no worker claimed yet wait for the resume, due timers wait' },
  [EVENT.executionQueued]: { writers: ['engine'], folds: false, meaning: 'the execution waits to be admitted (status queued): by its playbook\'s concurrency limit (context `limit`, `key`) and/or a debounce window (`debounce_until`); no step runs meanwhile' },
  [EVENT.executionAdmitted]: { writers: ['engine'], folds: true, meaning: 'a queued execution is admitted (its key had room, its debounce window closed): its entry step runs; a debounced one with the last start\'s payload (result `args`); context `limit`, `key` and `priority`: what it was admitted with (a debounced one\'s: the last start\'s)' },
  [EVENT.executionResumed]: { writers: ['operator'], folds: true, meaning: 'a paused execution goes on (context `requested_by`, `reason?`): the commands held while it was paused are issued' },
  [EVENT.timerSet]: { writers: ['engine'], folds: false, meaning: 'a step waits for a time (context `seq`, `wake_at`); it holds no worker meanwhile. A playbook task\'s own timers too: its `timeout_seconds` or its retry\'s delay (context `task`, `for`: timeout or retry, `attempt`)' },
  [EVENT.timerFired]: { writers: ['engine'], folds: true, meaning: 'a waiting step\'s time came (context `seq`, `wake_at`); the step moves on (a playbook task\'s timeout: its child is cancelled; its retry\'s delay: the next child starts)' },
  [EVENT.signalAwaited]: { writers: ['engine'], folds: false, meaning: 'a step waits for a signal (context `seq`, `signal`, `timeout_at`, `approval_roles`)' },
  [EVENT.signalReceived]: { writers: ['operator'], folds: true, meaning: 'a signal was sent to the execution (context `signal`, `seq` of the step it ends, or `buffered`; `by` and `role` of its sender; result: its payload)' },
  [EVENT.waitTimedOut]: { writers: ['engine'], folds: true, meaning: 'no signal came before a waiting step\'s timeout (context `seq`); the step\'s outcome is `timeout`' },
  [EVENT.batchAccepted]: { writers: ['intake'], folds: false, meaning: 'a batch of reported events was stored for later routing (the 202\'s marker)' },
  [EVENT.batchCompleted]: { writers: ['intake'], folds: false, meaning: 'a batch\'s events were routed (which were refused, commands issued)' },
  [EVENT.batchFailed]: { writers: ['intake'], folds: false, meaning: 'a batch could not be routed (its error)' },
} as const satisfies Record<EventType, EventTypeInfo>;

/** Every event type, in the registry's order. */
export const EVENT_TYPES: readonly EventType[] = Object.values(EVENT);

/** What the registry says of `type`. */
export function eventTypeInfo(type: EventType): EventTypeInfo {
  return INFO[type];
}

/** The types a worker may report (POST /api/worker/report, /api/events, /api/events/batch); the rest a client cannot forge. */
export type WorkerEventType = { [T in EventType]: 'worker' extends (typeof INFO)[T]['writers'][number] ? T : never }[EventType];
export const WORKER_EVENT_TYPES: readonly WorkerEventType[] = EVENT_TYPES.filter((t): t is WorkerEventType => eventTypeInfo(t).writers.includes('worker'));

/** The types that move the execution machine when folded; every other type folds to nothing. */
export type FoldingEventType = { [T in EventType]: (typeof INFO)[T]['folds'] extends true ? T : never }[EventType];
export const FOLDING_EVENT_TYPES: readonly FoldingEventType[] = EVENT_TYPES.filter((t): t is FoldingEventType => eventTypeInfo(t).folds);
