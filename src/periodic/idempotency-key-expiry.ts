import type { Db } from '../db/db.ts';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.repo.ts';
import type { Logger } from '../log.ts';
import { housekeeping, type PeriodicSpec } from './every.ts';

/** A start's `Idempotency-Key` gets its first answer back for at least this long; then it expires. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

export const IDEMPOTENCY_KEY_EXPIRY: PeriodicSpec = housekeeping('idempotency_key_expiry');

/** Deletes the start keys (core.idempotency_key) older than IDEMPOTENCY_KEY_TTL_MS; returns how many. */
export async function expireIdempotencyKeys(deps: { db: Db; log: Logger }): Promise<number> {
  const n = await deleteExpiredIdempotencyKeys(deps.db, IDEMPOTENCY_KEY_TTL_MS);
  if (n) deps.log.info({ keys: n }, 'expired idempotency keys deleted');
  return n;
}
