import { setTimeout as sleep } from 'node:timers/promises';
import * as v from 'valibot';
import { serverNotUp, type ServerClient } from '../worker/server-client.ts';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import { UNREACHABLE_GRACE_MS } from './watch-execution.ts';

const POLL_INTERVAL_MS = 500;
const Status = v.looseObject({ execution_id: v.number(), status: v.string(), result: v.optional(v.unknown()), error: v.optional(v.unknown()) });
export type ExecutionAnswer = v.InferOutput<typeof Status>;

/**
 * Polls `GET /api/executions/{id}` until the execution has ended; `onPoll` sees each answer
 * (progress lines). Returns the terminal answer. A paused or queued execution has not ended: it
 * goes on once resumed or admitted. A server that goes away meanwhile (a restart) is waited for
 * up to UNREACHABLE_GRACE_MS, said on `err`, as svc run --wait and svc logs --follow do; then
 * its error is thrown.
 */
export async function waitForExecution(
  client: ServerClient,
  id: number,
  onPoll: (answer: ExecutionAnswer) => void | Promise<void> = () => {},
  err: { write(text: string): unknown } = process.stderr,
): Promise<ExecutionAnswer> {
  let unreachableSince: number | undefined;
  for (;;) {
    let answer: ExecutionAnswer;
    try {
      answer = v.parse(Status, await client.request<unknown>('GET', `/api/executions/${id}`));
      await onPoll(answer);
    } catch (e) {
      if (!serverNotUp(e)) throw e;
      if (unreachableSince === undefined) {
        unreachableSince = performance.now();
        err.write(`server unreachable: ${e instanceof Error ? e.message : String(e)}; still waiting, for up to ${UNREACHABLE_GRACE_MS / 1000}s\n`);
      } else if (performance.now() - unreachableSince > UNREACHABLE_GRACE_MS) throw e;
      await sleep(POLL_INTERVAL_MS);
      continue;
    }
    if (unreachableSince !== undefined) err.write('server reachable again\n');
    unreachableSince = undefined;
    if (isTerminalExecutionStatus(answer.status)) return answer;
    await sleep(POLL_INTERVAL_MS);
  }
}
