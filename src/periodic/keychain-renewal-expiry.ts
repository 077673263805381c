import type { Db } from '../db/db.ts';
import { deleteExpiredKeychainRenewals } from '../db/keychain-renewal.repo.ts';
import type { Logger } from '../log.ts';
import { housekeeping, type PeriodicSpec } from './every.ts';

/**
 * A lease that ended this long ago goes: a minute, so that no clock between a server and
 * PostgreSQL deletes one a take still reads as held.
 */
export const KEYCHAIN_RENEWAL_GRACE_S = 60;

export const KEYCHAIN_RENEWAL_EXPIRY: PeriodicSpec = housekeeping('keychain_renewal_expiry');

/** Deletes keychain renewal leases (core.keychain_renewal) that expired over `graceSeconds` ago; returns how many. */
export async function expireKeychainRenewals(deps: { db: Db; log: Logger }, graceSeconds = KEYCHAIN_RENEWAL_GRACE_S): Promise<number> {
  const n = await deleteExpiredKeychainRenewals(deps.db, graceSeconds);
  if (n) deps.log.info({ leases: n }, 'expired keychain renewal leases deleted');
  return n;
}
