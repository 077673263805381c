import { deleteFinishedBatches } from '../db/batch.repo.ts';
import type { Db } from '../db/db.ts';
import type { Logger } from '../log.ts';
import type { PeriodicSpec } from './every.ts';

/** Finished batch requests (and so their idempotency keys) are kept this long. */
export const BATCH_RETENTION_SECONDS = 48 * 3600;
// Rows one run deletes at most; the next run takes the rest.
const CLEANUP_MAX_ROWS = 5_000;
// A run deletes a few thousand rows at most; a holder that dies blocks the others this long.
const SWEEP_LEASE_TTL_SECONDS = 120;

// Every minute, on one server of many (a lease). Batches left unfinished need no sweep: a processor
// takes an execution whose batches were held past their lease again (src/db/batch.repo.ts claimBatches).
export const BATCH_SWEEP: PeriodicSpec = { name: 'batch_sweep', intervalMs: 60_000, lease: { ttlSeconds: SWEEP_LEASE_TTL_SECONDS } };

/** Deletes finished batch requests past BATCH_RETENTION_SECONDS (up to CLEANUP_MAX_ROWS a run); returns how many. */
export async function sweepBatches(deps: { db: Db; log: Logger }): Promise<number> {
  const n = await deleteFinishedBatches(deps.db, BATCH_RETENTION_SECONDS, CLEANUP_MAX_ROWS);
  if (n) deps.log.debug({ batches: n }, 'finished batch requests past their retention deleted');
  return n;
}
