import type { Keyring } from './keyring.ts';
import { credentialAad, open, SealError, unopenedReason } from './seal.ts';
import { isObject } from '../objects.ts';

/**
 * A stored credential's data opened with `keyring` (bound to its name): its fields, or why not, in
 * words that never hold the data (a key that does not open it, data that is not an object).
 */
export function openCredential(keyring: Keyring, name: string, sealed: string): { data: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = open(keyring, sealed, credentialAad(name));
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return { problem: `credential '${name}' cannot be opened with the configured keys: ${unopenedReason(err)}` };
  }
  return isObject(value) ? { data: value } : { problem: `credential '${name}' holds no fields` };
}
