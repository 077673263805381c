import { credentialKeyIds } from '../db/credential.repo.ts';
import { executionSecretKeyIds } from '../db/execution-secret.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { keychainKeyIds } from '../db/keychain.repo.ts';
import type { Keyring } from './keyring.ts';
import { plural } from '../plural.ts';

/**
 * A key id that stored rows are sealed with and the keyring lacks, with how many rows of each
 * table (`executionSecrets`: live sealed `workload.access_token`s, core.execution_secret).
 */
export type MissingKey = { kid: string; credentials: number; keychain: number; executionSecrets: number };

type KeyTally = readonly { kid: string; rows: number }[];

/**
 * Start refuses with this: a server that cannot open its stored rows would otherwise run and
 * answer 409 on every credential read. The message names key ids and counts, never key material.
 */
export class MissingKeyError extends Error {
  override name = 'MissingKeyError';
  readonly missing: readonly MissingKey[];

  constructor(message: string, missing: readonly MissingKey[]) {
    super(message);
    this.missing = missing;
  }
}

/** Key ids of the per-table tallies that `keyring` cannot open, in key id order. */
export function missingKeys(keyring: Pick<Keyring, 'keyFor'>, credentials: KeyTally, keychain: KeyTally, executionSecrets: KeyTally): MissingKey[] {
  const byKid = new Map<string, MissingKey>();
  const entry = (kid: string): MissingKey => {
    let m = byKid.get(kid);
    if (!m) byKid.set(kid, (m = { kid, credentials: 0, keychain: 0, executionSecrets: 0 }));
    return m;
  };
  for (const { kid, rows } of credentials) if (keyring.keyFor(kid) === undefined) entry(kid).credentials += rows;
  for (const { kid, rows } of keychain) if (keyring.keyFor(kid) === undefined) entry(kid).keychain += rows;
  for (const { kid, rows } of executionSecrets) if (keyring.keyFor(kid) === undefined) entry(kid).executionSecrets += rows;
  return [...byKid.values()].sort((a, b) => a.kid.localeCompare(b.kid));
}

function rowsText(m: MissingKey): string {
  const parts = [];
  if (m.credentials > 0) parts.push(plural(m.credentials, 'credential', 'credentials'));
  if (m.keychain > 0) parts.push(plural(m.keychain, 'keychain entry', 'keychain entries'));
  if (m.executionSecrets > 0) parts.push(plural(m.executionSecrets, 'execution secret', 'execution secrets'));
  return parts.join(', ');
}

/**
 * One line saying which key ids are missing, for how many rows, and what to do. `currentSource`
 * names where the current key came from (SVC_ENCRYPTION_KEY or the embedded key file).
 */
export function missingKeysMessage(missing: readonly MissingKey[], currentKid: string, currentSource: string): string {
  const ids = missing.map((m) => `${m.kid} (${rowsText(m)})`).join(', ');
  const them = missing.length === 1 ? 'that key' : 'those keys';
  return (
    `stored data is sealed with key id${missing.length === 1 ? '' : 's'} ${ids}, which neither ${currentSource} (key id ${currentKid}) ` +
    `nor SVC_ENCRYPTION_KEYS_OLD holds; restore ${them} as SVC_ENCRYPTION_KEY, or add ${them} to SVC_ENCRYPTION_KEYS_OLD ` +
    `(comma list) and run \`svc rekey\` to re-seal with the current key`
  );
}

/**
 * Throws MissingKeyError when a stored credential, keychain row or live execution secret (a
 * start's sealed `workload.access_token`, opened by a worker's mcp task) is sealed with a key id
 * the keyring does not hold: every sealed value a server opens. An expired execution secret is
 * never opened again and needs no key. Reads key ids only (one grouped scan per table), never
 * opens a row.
 */
export async function checkStoredKeys(q: Queryable, keyring: Keyring, currentSource: string): Promise<void> {
  const missing = missingKeys(keyring, await credentialKeyIds(q), await keychainKeyIds(q), await executionSecretKeyIds(q));
  if (missing.length > 0) throw new MissingKeyError(missingKeysMessage(missing, keyring.currentKid, currentSource), missing);
}
