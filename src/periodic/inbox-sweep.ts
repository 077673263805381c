import { routeEvents } from '../../actors/route-events.ts';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import { executionsWithInbox } from '../db/execution.repo.ts';

export const INBOX_SWEEP_INTERVAL_MS = 15_000;
const INBOX_SWEEP_BATCH = 100;

/**
 * Applies inbox events that no router applied yet (the server stopped between committing an
 * append and routing its target). Returns how many executions it routed.
 */
export async function sweepInbox(deps: EngineDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = await executionsWithInbox(deps.db, INBOX_SWEEP_BATCH);
    if (!ids.length) return total;
    for (const id of ids) {
      try {
        await routeEvents(deps, [], { wake: [id] });
      } catch (err) {
        deps.log.warn({ err: String(err), execution_id: id }, 'inbox sweep could not route an execution');
      }
    }
    total += ids.length;
    if (ids.length < INBOX_SWEEP_BATCH) return total;
  }
}

/** Runs the sweep at start and then every INBOX_SWEEP_INTERVAL_MS; returns a stop function. */
export function startInboxSweeper(deps: EngineDeps): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const n = await sweepInbox(deps);
      if (n) deps.log.info({ executions: n }, 'inbox sweep applied pending events');
    } catch (err) {
      // The message only, as the bus logs it: a database that went away (a stop during start) is
      // a transient condition here, not a fault with a name and a stack.
      deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'inbox sweep failed');
    }
    if (!stopped) timer = setTimeout(tick, INBOX_SWEEP_INTERVAL_MS).unref();
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
