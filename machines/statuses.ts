// The statuses of an execution: the execution machine's top-level states, what the API answers and
// filters by, and what core.execution.status stores. One list for every layer (pure, no I/O).

export const EXECUTION_STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** The statuses an execution ends in: once in one, nothing changes it. */
export const TERMINAL_EXECUTION_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly ExecutionStatus[];
export type TerminalExecutionStatus = (typeof TERMINAL_EXECUTION_STATUSES)[number];

/** True for a status an execution ends in (any text: statuses read from answers and rows). */
export function isTerminalExecutionStatus(status: string): status is TerminalExecutionStatus {
  return (TERMINAL_EXECUTION_STATUSES as readonly string[]).includes(status);
}
