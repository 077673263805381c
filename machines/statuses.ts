// The statuses of an execution: what the API answers and filters by, and what
// core.execution.status stores. One list for every layer (pure, no I/O). `running`, `completed`,
// `failed` and `cancelled` are the execution machine's top-level states; `paused` is `running`
// with the machine's `paused` flag set (no command is issued until it is resumed); `queued` is
// `running` before admission (flow control: a concurrency limit's key or a debounce window).

export const EXECUTION_STATUSES = ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** The statuses an execution ends in: once in one, nothing changes it. */
export const TERMINAL_EXECUTION_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly ExecutionStatus[];
export type TerminalExecutionStatus = (typeof TERMINAL_EXECUTION_STATUSES)[number];

/** The statuses of an execution that has not ended: its machine still folds what it is sent. */
export const LIVE_EXECUTION_STATUSES = ['queued', 'running', 'paused'] as const satisfies readonly ExecutionStatus[];
export type LiveExecutionStatus = (typeof LIVE_EXECUTION_STATUSES)[number];

/** True for a status an execution ends in (any text: statuses read from answers and rows). */
export function isTerminalExecutionStatus(status: string): status is TerminalExecutionStatus {
  return (TERMINAL_EXECUTION_STATUSES as readonly string[]).includes(status);
}

/** True for a status of an execution that has not ended (queued, running or paused). */
export function isLiveExecutionStatus(status: string): status is LiveExecutionStatus {
  return status === 'running' || status === 'paused' || status === 'queued';
}
