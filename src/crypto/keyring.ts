import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** AES-256 wants exactly this many key bytes. */
export const KEY_LENGTH_BYTES = 32;

/**
 * The set of data-encryption keys: one current key that seals, older keys that still open.
 * Keys live in a closure, not in properties, so logging or JSON-serialising a keyring
 * never prints key material.
 */
export interface Keyring {
  /** Key id of the key that seals new values. */
  readonly currentKid: string;
  /** Every key id of the ring, the current one first. */
  readonly kids: readonly string[];
  /**
   * The key with this id, or undefined when the ring does not hold it. A KeyObject: its bytes stay
   * out of the JS heap, and a cipher made from it skips importing raw bytes (15 µs a call, 3 with it).
   */
  keyFor(kid: string): KeyObject | undefined;
}

/** Key id: the first 8 hex characters of sha256(key); names a key without revealing it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function checkKeyLength(key: Buffer, label: string): void {
  if (key.length !== KEY_LENGTH_BYTES) {
    throw new Error(`${label} must be ${KEY_LENGTH_BYTES} bytes, got ${key.length} bytes`);
  }
}

/**
 * Builds a keyring from the current key and older keys (each exactly 32 bytes, else throws).
 * Duplicates of the same key are folded; two different keys sharing a key id are refused.
 */
export function createKeyring(current: Buffer, old: Buffer[]): Keyring {
  checkKeyLength(current, 'current encryption key');
  old.forEach((key, i) => checkKeyLength(key, `old encryption key #${i + 1}`));

  const byKid = new Map<string, KeyObject>();
  for (const key of [current, ...old]) {
    const kid = keyId(key);
    const known = byKid.get(kid);
    if (known === undefined) {
      // A KeyObject holds its own copy: a caller that later zeroes or reuses its buffer cannot change the ring.
      byKid.set(kid, createSecretKey(key));
    } else if (!known.equals(createSecretKey(key))) {
      throw new Error(`two different encryption keys share key id ${kid}; replace one of them`);
    }
  }
  const currentKid = keyId(current);
  const kids = Object.freeze([...byKid.keys()]);
  return Object.freeze({
    currentKid,
    kids,
    keyFor: (kid: string): KeyObject | undefined => byKid.get(kid),
  });
}

const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2})$/;

/** Decodes one base64 (or base64url) key; messages name the variable, never the value. */
function decodeKey(text: string, label: string): Buffer {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error(`${label} is empty; expected base64 of ${KEY_LENGTH_BYTES} bytes`);
  if (!BASE64_PATTERN.test(trimmed)) {
    throw new Error(`${label} is not valid base64; expected base64 of ${KEY_LENGTH_BYTES} bytes`);
  }
  const key = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
  if (key.length !== KEY_LENGTH_BYTES) {
    throw new Error(`${label} must decode to ${KEY_LENGTH_BYTES} bytes, got ${key.length} bytes`);
  }
  return key;
}

/**
 * Keyring from `SVC_ENCRYPTION_KEY` (base64 of 32 bytes) and `SVC_ENCRYPTION_KEYS_OLD`
 * (comma list of the same, empty items ignored). Throws an Error naming the variable at fault;
 * `currentLabel` names where the current key came from when that is not the variable (a key file).
 */
export function parseKeyringFromEnv(currentB64: string, oldCommaList: string | undefined, currentLabel = 'SVC_ENCRYPTION_KEY'): Keyring {
  const current = decodeKey(currentB64, currentLabel);
  const oldItems = (oldCommaList ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const old = oldItems.map((item, i) => decodeKey(item, `SVC_ENCRYPTION_KEYS_OLD entry #${i + 1}`));
  return createKeyring(current, old);
}

/** A fresh random 32-byte key as standard base64, suitable for `SVC_ENCRYPTION_KEY`. */
export function generateKeyBase64(): string {
  return randomBytes(KEY_LENGTH_BYTES).toString('base64');
}
