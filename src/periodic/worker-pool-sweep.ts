// Worker pools are forgotten after a long silence. Every worker process registers a pool under its
// own name (host, pid, a random tail), and a pool killed without deregistering stays `ready` with
// an old heartbeat: without this, each restart of a worker would leave a row in the pool list, and
// the doctor's stale_worker_pools check would warn of it forever. A forgotten pool that is alive
// after all (stopped with SIGSTOP for a day) registers again at its next beat (src/worker/worker.ts).
import type { Db } from '../db/db.ts';
import { forgetSilentWorkerPools } from '../db/runtime.repo.ts';
import type { Logger } from '../log.ts';
import { housekeeping, type PeriodicSpec } from './every.ts';

/** A pool silent this long (no heartbeat, or deregistered this long ago) that holds no command is forgotten. */
export const WORKER_POOL_FORGET_AFTER_S = 24 * 60 * 60;

export const WORKER_POOL_SWEEP: PeriodicSpec = housekeeping('worker_pool_sweep');

/** Forgets the pools silent for over `silentSeconds` that hold no command; returns their names. */
export async function sweepWorkerPools(deps: { db: Db; log: Logger }, silentSeconds = WORKER_POOL_FORGET_AFTER_S): Promise<string[]> {
  const names = await forgetSilentWorkerPools(deps.db, silentSeconds);
  if (names.length) deps.log.info({ pools: names, silentSeconds }, 'silent worker pools forgotten');
  return names;
}
