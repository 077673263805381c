import { routeEvents } from '../../actors/route-events.ts';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import { executionsWithInbox } from '../db/execution.repo.ts';
import type { PeriodicSpec } from './every.ts';

const INBOX_SWEEP_BATCH = 100;

// At start (what a stop left unrouted) and then every 15 s, on every server: no lease, since a
// sweep that finds nothing costs one indexed read and routing an execution twice applies nothing twice.
export const INBOX_SWEEP: PeriodicSpec = { name: 'inbox_sweep', intervalMs: 15_000, firstDelayMs: 0 };

/**
 * Applies inbox events that no router applied yet (the server stopped between committing an
 * append and routing its target). Returns how many executions it routed.
 */
export async function sweepInbox(deps: EngineDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = await executionsWithInbox(deps.db, INBOX_SWEEP_BATCH);
    if (!ids.length) break;
    for (const id of ids) {
      try {
        await routeEvents(deps, [], { wake: [id] });
      } catch (err) {
        deps.log.warn({ err: String(err), execution_id: id }, 'inbox sweep could not route an execution');
      }
    }
    total += ids.length;
    if (ids.length < INBOX_SWEEP_BATCH) break;
  }
  if (total) deps.log.info({ executions: total }, 'inbox sweep applied pending events');
  return total;
}
