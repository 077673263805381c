import type { EngineDeps } from '../../actors/engine-deps.ts';
import { EVENT } from '../../machines/event-types.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { getExecution, type ExecutionStatus } from '../db/execution.repo.ts';
import { isLiveExecutionStatus } from '../../machines/statuses.ts';

/**
 * Cancels a running (or paused) execution the one way there is: an `execution.cancelled` event
 * (context `reason`, `cancelled_at` and whatever `context` adds; `cascade: false` leaves its child
 * executions running) routed to its machine, which cancels its commands and children, ends its
 * waits and removes its local (and, at a root, shared) keychain entries.
 * `cancelled` when this call ended it; otherwise the status it already had (`undefined`: no such execution).
 */
export async function cancelExecution(
  deps: EngineDeps,
  executionId: number,
  context: { reason: string } & Record<string, unknown>,
): Promise<{ cancelled: true } | { cancelled: false; status: ExecutionStatus | undefined }> {
  const row = await getExecution(deps.db, executionId);
  if (!row || !isLiveExecutionStatus(row.status)) return { cancelled: false, status: row?.status };
  await routeEvents(deps, [{ execution_id: executionId, event_type: EVENT.executionCancelled, context: { ...context, cancelled_at: new Date().toISOString() } }]);
  const after = await getExecution(deps.db, executionId);
  return after?.status === 'cancelled' ? { cancelled: true } : { cancelled: false, status: after?.status };
}
