// Drives one keychain read through the pure keychain-entry machine: the machine decides (and words
// the log lines); this file only performs the effects it returns. Used by keychain-resolver.ts.
import * as v from 'valibot';
import { initialTransition, transition } from 'xstate';
import { keychainEntryMachine, readOutcome, type KeychainEntryEvent, type KeychainEntrySnapshot } from '../../machines/keychain-entry.machine.ts';
import type { KeychainScope } from '../keychain/cache-key.ts';
import type { Logger } from '../log.ts';

const LogParams = v.object({ name: v.string(), message: v.string() });
const FailureParams = v.object({ name: v.string(), message: v.string(), reason: v.string() });

export type EntryEffects = {
  /** The machine asked for a token request (RENEW accepted). */
  requestRenewal: boolean;
  /** The machine asked to write the renewed entry (RENEWED accepted). */
  storeRenewed: boolean;
};

/**
 * One entry's machine, hydrated from a read answer (`not_found` → absent, `expired` → a row whose
 * expiry has passed), with the log effects performed as they are returned.
 */
export class EntryFlow {
  #snapshot: KeychainEntrySnapshot;
  readonly #log: Logger;
  readonly #logFields: Record<string, unknown>;

  /** `logFields` go on every log line (never a value of the entry). */
  constructor(input: { name: string; scope: KeychainScope; autoRenew: boolean; found: boolean }, log: Logger, logFields: Record<string, unknown> = {}) {
    this.#log = log;
    this.#logFields = logFields;
    // Any past instant stands for "expired": the read answer does not carry the old expiry.
    const [hydrated] = initialTransition(keychainEntryMachine, {
      name: input.name,
      scope: input.scope,
      autoRenew: input.autoRenew,
      expiresAtMs: input.found ? 0 : null,
    });
    this.#snapshot = hydrated;
  }

  /** What a read returns now: `not_found`, `expired` or `success`. */
  get outcome(): 'not_found' | 'expired' | 'success' {
    return readOutcome(this.#snapshot);
  }

  /** Sends `event`, performs the log effects (exact KEYCHAIN: lines) and reports the others. */
  send(event: KeychainEntryEvent): EntryEffects {
    const [next, actions] = transition(keychainEntryMachine, this.#snapshot, event);
    this.#snapshot = next;
    const effects: EntryEffects = { requestRenewal: false, storeRenewed: false };
    for (const action of actions) {
      switch (action.type) {
        case 'logNotFound':
        case 'logExpired': {
          const params = v.safeParse(LogParams, action.params);
          if (params.success) this.#log.info({ keychain: params.output.name, ...this.#logFields }, params.output.message);
          break;
        }
        case 'logRenewalFailed': {
          const params = v.safeParse(FailureParams, action.params);
          if (params.success) this.#log.warn({ keychain: params.output.name, reason: params.output.reason, ...this.#logFields }, params.output.message);
          break;
        }
        case 'requestRenewal':
          effects.requestRenewal = true;
          break;
        case 'storeRenewedEntry':
          effects.storeRenewed = true;
          break;
      }
    }
    return effects;
  }
}
