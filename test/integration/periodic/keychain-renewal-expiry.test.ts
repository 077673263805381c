// Keychain renewal leases left behind (a holder that died before it gave its lease back, an entry
// whose execution ended meanwhile) are deleted by the housekeeping job once expired a minute:
// before it, core.keychain_renewal kept a row per lease ever taken. A live lease, and one
// expired within the grace, stay; a take after the sweep is granted as before.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.ts';
import { takeKeychainRenewal } from '../../../src/db/keychain-renewal.repo.ts';
import { createLogger } from '../../../src/log.ts';
import { expireKeychainRenewals, KEYCHAIN_RENEWAL_GRACE_S } from '../../../src/periodic/keychain-renewal-expiry.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';

let t: TestDatabase & { db: Db };
beforeAll(async () => {
  t = await createMigratedDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('keychain renewal lease expiry', () => {
  it('deletes leases expired over the grace, keeps live and recently expired ones, and logs how many', async () => {
    const now = Date.now();
    const at = (secondsAgo: number) => new Date(now - secondsAgo * 1000);
    // Taken so that they end at these times: long ago, just inside the grace, and in the future.
    expect(await takeKeychainRenewal(t.db, 'global:old', uuid(1), 30, at(3600))).toBe(true);
    expect(await takeKeychainRenewal(t.db, 'global:recent', uuid(2), 30, at(30 + KEYCHAIN_RENEWAL_GRACE_S / 2))).toBe(true);
    expect(await takeKeychainRenewal(t.db, 'global:live', uuid(3), 45, at(0))).toBe(true);
    const lines: string[] = [];
    const log = createLogger(
      'info',
      new Writable({
        write(chunk, _enc, cb) {
          lines.push(String(chunk));
          cb();
        },
      }),
    );
    expect(await expireKeychainRenewals({ db: t.db, log })).toBe(1);
    const { rows } = await t.db.query<{ cache_key: string }>(`SELECT cache_key FROM core.keychain_renewal ORDER BY cache_key`);
    expect(rows.map((r) => r.cache_key)).toEqual(['global:live', 'global:recent']);
    expect(lines.some((l) => l.includes('expired keychain renewal leases deleted') && l.includes('"leases":1'))).toBe(true);
    // Nothing more to delete: nothing logged, and the live lease still refuses another take.
    expect(await expireKeychainRenewals({ db: t.db, log })).toBe(0);
    expect(await takeKeychainRenewal(t.db, 'global:live', uuid(4), 45, new Date())).toBe(false);
    // The deleted key is taken afresh.
    expect(await takeKeychainRenewal(t.db, 'global:old', uuid(5), 45, new Date())).toBe(true);
  });
});
