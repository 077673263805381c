import type { Db } from '../db/db.ts';
import { deleteExpiredKeychainEntries } from '../db/keychain.repo.ts';
import type { Logger } from '../log.ts';
import { housekeeping, type PeriodicSpec } from './every.ts';

/**
 * An entry that expired this long ago goes: for a minute a read still answers `expired` (the
 * spec's expired state), and no clock between a server and PostgreSQL deletes one a read holds live.
 */
export const KEYCHAIN_ENTRY_GRACE_S = 60;

export const KEYCHAIN_ENTRY_EXPIRY: PeriodicSpec = housekeeping('keychain_entry_expiry');

/**
 * The spec's cleanup at TTL expiry: deletes keychain entries without auto_renew that expired over
 * `graceSeconds` ago (else their playbook's runs failed until an admin deleted them); returns how many.
 */
export async function expireKeychainEntries(deps: { db: Db; log: Logger }, graceSeconds = KEYCHAIN_ENTRY_GRACE_S): Promise<number> {
  const n = await deleteExpiredKeychainEntries(deps.db, graceSeconds);
  if (n) deps.log.info({ entries: n }, 'expired keychain entries deleted');
  return n;
}
