import { describe, expect, it } from 'vitest';
import { ownerFinishedDeletes, scopesRemovedWhenFinished } from '../../../machines/keychain-owner-finished.ts';

// The entries a finished execution's write removes are the ones the keychain-entry machine's
// OWNER_FINISHED transition deletes, among the entries that execution owns.

describe('keychain entries removed when their owner finishes', () => {
  it('the machine deletes local and shared entries, keeps global ones', () => {
    expect(ownerFinishedDeletes('local')).toBe(true);
    expect(ownerFinishedDeletes('shared')).toBe(true);
    expect(ownerFinishedDeletes('global')).toBe(false);
  });

  it('a root removes its local and shared entries; a child only its local ones', () => {
    expect(scopesRemovedWhenFinished(true)).toEqual(['local', 'shared']);
    expect(scopesRemovedWhenFinished(false)).toEqual(['local']);
    for (const isRoot of [true, false]) {
      for (const scope of ['global', 'local', 'shared'] as const) {
        const owned = scope === 'local' || (scope === 'shared' && isRoot);
        expect(scopesRemovedWhenFinished(isRoot).includes(scope), `${scope} root=${isRoot}`).toBe(owned && ownerFinishedDeletes(scope));
      }
    }
  });
});
