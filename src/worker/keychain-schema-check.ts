import { validateAgainstSchema } from '../crypto/validate-against-schema.ts';
import type { Logger } from '../log.ts';

/**
 * Checks an entry read from the keychain against the schema stored with it and warns
 * `KEYCHAIN: Entry '<name>' fails its schema: <errors>` when it fails. The caller uses the entry
 * anyway (the spec's rule): the store already validated it, so a failure here means the schema
 * changed later, and a warning serves running work better than a step that stops. The errors
 * name fields and types, never values; `logFields` must hold no value of the entry either.
 * Returns the errors (empty when valid or when there is no schema).
 */
export function checkEntrySchema(
  name: string,
  tokenData: Record<string, unknown>,
  schema: unknown,
  log: Logger,
  logFields: Record<string, unknown> = {},
): string[] {
  const errors = validateAgainstSchema(tokenData, schema);
  if (errors.length > 0) log.warn({ keychain: name, ...logFields }, `KEYCHAIN: Entry '${name}' fails its schema: ${errors.join('; ')}`);
  return errors;
}
