import type { Keyring } from '../crypto/keyring.ts';
import { openCredential } from '../crypto/open-credential.ts';

/** The field of the trigger's credential that holds the webhook secret (docs/webhooks.md). */
export const WEBHOOK_SECRET_FIELD = 'secret';

/**
 * The secret in the sealed data of the credential `name` (its `secret` field, non-empty text;
 * `sealed` null: no such credential), or why there is none, in words for the server's log. The
 * secret is never part of the words.
 */
export function webhookSecret(keyring: Keyring, name: string, sealed: string | null): { secret: string } | { problem: string } {
  if (sealed === null) return { problem: `credential '${name}' does not exist` };
  const opened = openCredential(keyring, name, sealed);
  if ('problem' in opened) return opened;
  const secret = opened.data[WEBHOOK_SECRET_FIELD];
  if (typeof secret !== 'string' || secret === '') return { problem: `credential '${name}' has no '${WEBHOOK_SECRET_FIELD}' field of non-empty text` };
  return { secret };
}
