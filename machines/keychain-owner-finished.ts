import { transition } from 'xstate';
import type { KeychainScope } from '../src/keychain/cache-key.ts';
import { keychainEntryMachine } from './keychain-entry.machine.ts';

const SCOPES: readonly KeychainScope[] = ['global', 'local', 'shared'];

/** Scopes an execution owns the entries of: its `local` ones, and the `shared` ones of its tree when it is the root. */
const ownedScopes = (isRoot: boolean): KeychainScope[] => (isRoot ? ['local', 'shared'] : ['local']);

/** Whether the keychain-entry machine removes a live entry of this scope when its owner finishes. */
export function ownerFinishedDeletes(scope: KeychainScope): boolean {
  const live = keychainEntryMachine.resolveState({ value: 'live', context: { name: 'entry', scope, autoRenew: false, expiresAtMs: 1, accessCount: 0 } });
  const [, actions] = transition(keychainEntryMachine, live, { type: 'OWNER_FINISHED' });
  return actions.some((a) => a.type === 'deleteEntry');
}

const decided = new Map<boolean, KeychainScope[]>();

/**
 * The scopes whose entries are removed when an execution finishes: the machine's OWNER_FINISHED
 * transition decides, for the entries that execution owns. The write statement deletes exactly
 * these (src/db/unit-write.ts); computed once per root/non-root.
 */
export function scopesRemovedWhenFinished(isRoot: boolean): KeychainScope[] {
  let out = decided.get(isRoot);
  if (!out) {
    out = SCOPES.filter((s) => ownedScopes(isRoot).includes(s) && ownerFinishedDeletes(s));
    decided.set(isRoot, out);
  }
  return out;
}
