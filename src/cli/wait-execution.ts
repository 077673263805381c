import * as v from 'valibot';
import type { ServerClient } from '../worker/server-client.ts';

const POLL_INTERVAL_MS = 500;
const Status = v.looseObject({ execution_id: v.number(), status: v.string(), result: v.optional(v.unknown()), error: v.optional(v.unknown()) });
export type ExecutionAnswer = v.InferOutput<typeof Status>;

/**
 * Polls `GET /api/executions/{id}` until the execution is no longer running; `onPoll` sees each
 * answer (progress lines). Returns the terminal answer.
 */
export async function waitForExecution(client: ServerClient, id: number, onPoll: (answer: ExecutionAnswer) => void | Promise<void> = () => {}): Promise<ExecutionAnswer> {
  for (;;) {
    const answer = v.parse(Status, await client.request<unknown>('GET', `/api/executions/${id}`));
    await onPoll(answer);
    if (answer.status !== 'running') return answer;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
