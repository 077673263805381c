import * as v from 'valibot';
import type { ServerClient } from '../worker/server-client.ts';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';

const POLL_INTERVAL_MS = 500;
const Status = v.looseObject({ execution_id: v.number(), status: v.string(), result: v.optional(v.unknown()), error: v.optional(v.unknown()) });
export type ExecutionAnswer = v.InferOutput<typeof Status>;

/**
 * Polls `GET /api/executions/{id}` until the execution has ended; `onPoll` sees each answer
 * (progress lines). Returns the terminal answer. A paused or queued execution has not ended: it
 * goes on once resumed or admitted.
 */
export async function waitForExecution(client: ServerClient, id: number, onPoll: (answer: ExecutionAnswer) => void | Promise<void> = () => {}): Promise<ExecutionAnswer> {
  for (;;) {
    const answer = v.parse(Status, await client.request<unknown>('GET', `/api/executions/${id}`));
    await onPoll(answer);
    if (isTerminalExecutionStatus(answer.status)) return answer;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
