import type { EngineDeps } from '../../actors/engine-deps.ts';
import { EVENT } from '../../machines/event-types.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { getExecution, type ExecutionStatus } from '../db/execution.repo.ts';
import { isLiveExecutionStatus } from '../../machines/statuses.ts';
import { databaseNow } from '../waits/wait-clock.ts';

/**
 * Cancels a running (or paused) execution the one way there is: an `execution.cancelled` event
 * (context `reason`, `cancelled_at` and whatever `context` adds; `cascade: false` leaves its child
 * executions running) routed to its machine, which cancels its commands and children, ends its
 * waits and removes its local (and, at a root, shared) keychain entries.
 * `cancelled` when this call's event ended it (of cancels at once, one); otherwise the status it
 * has (`undefined`: no such execution), `cancelled` too when another cancel ended it first.
 */
export async function cancelExecution(
  deps: EngineDeps,
  executionId: number,
  context: { reason: string } & Record<string, unknown>,
): Promise<{ cancelled: true } | { cancelled: false; status: ExecutionStatus | undefined }> {
  const row = await getExecution(deps.db, executionId);
  if (!row || !isLiveExecutionStatus(row.status)) return { cancelled: false, status: row?.status };
  const { results } = await routeEvents(deps, [{ execution_id: executionId, event_type: EVENT.executionCancelled, context: { ...context, cancelled_at: new Date(databaseNow(deps)).toISOString() } }]);
  // Only its own event, applied, is this call's cancel: of cancels at once the execution is
  // cancelled after each, by one of them, with that one's reason and cascade.
  if (results[0]?.event_id != null) return { cancelled: true };
  const after = await getExecution(deps.db, executionId);
  return { cancelled: false, status: after?.status };
}
