import type { Keyring } from '../crypto/keyring.ts';
import { credentialAad, open, SealError } from '../crypto/seal.ts';
import { getCredentialByName } from '../db/credential.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { isObject } from '../objects.ts';

/** The field of the trigger's credential that holds the webhook secret (docs/webhooks.md). */
export const WEBHOOK_SECRET_FIELD = 'secret';

/**
 * The secret of the credential named `name` (its `secret` field, non-empty text), or why there is
 * none, in words for the server's log: the credential is missing, cannot be opened, or has no secret.
 * The secret is never part of the words.
 */
export async function webhookSecret(q: Queryable, keyring: Keyring, name: string): Promise<{ secret: string } | { problem: string }> {
  const row = await getCredentialByName(q, name);
  if (!row) return { problem: `credential '${name}' does not exist` };
  let data: unknown;
  try {
    data = open(keyring, row.data_encrypted, credentialAad(row.name));
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return { problem: `credential '${name}' cannot be opened with the configured keys` };
  }
  const secret = isObject(data) ? data[WEBHOOK_SECRET_FIELD] : undefined;
  if (typeof secret !== 'string' || secret === '') return { problem: `credential '${name}' has no '${WEBHOOK_SECRET_FIELD}' field of non-empty text` };
  return { secret };
}
