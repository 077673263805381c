import type { Db } from '../db/db.ts';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.repo.ts';
import type { Logger } from '../log.ts';
import type { PeriodicSpec } from './every.ts';

/** A start's `Idempotency-Key` gets its first answer back for at least this long; then it expires. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
// Deletes take milliseconds per batch of keys; a holder that dies blocks the others this long.
const EXPIRY_LEASE_TTL_SECONDS = 300;

// Every 10 minutes, on one server of many (a lease). Not at once: a start is when a stop signal is
// most likely to cut the database away under it.
export const IDEMPOTENCY_KEY_EXPIRY: PeriodicSpec = {
  name: 'idempotency_key_expiry',
  intervalMs: 10 * 60 * 1000,
  firstDelayMs: 60_000,
  lease: { ttlSeconds: EXPIRY_LEASE_TTL_SECONDS },
};

/** Deletes the start keys (core.idempotency_key) older than IDEMPOTENCY_KEY_TTL_MS; returns how many. */
export async function expireIdempotencyKeys(deps: { db: Db; log: Logger }): Promise<number> {
  const n = await deleteExpiredIdempotencyKeys(deps.db, IDEMPOTENCY_KEY_TTL_MS);
  if (n) deps.log.info({ keys: n }, 'expired idempotency keys deleted');
  return n;
}
