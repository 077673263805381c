import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring } from './keyring.ts';

/** Format marker of sealed text; a new layout gets a new marker, old rows keep opening. */
const SEAL_VERSION = 'v1';
const CIPHER = 'aes-256-gcm';
/** 96-bit nonce: the size GCM is designed for (no extra GHASH step). */
const NONCE_LENGTH_BYTES = 12;
/** Full-length tag; truncated GCM tags weaken forgery resistance. */
const TAG_LENGTH_BYTES = 16;
const KID_PATTERN = /^[0-9a-f]{8}$/;
const BASE64URL_PATTERN = /^[A-Za-z0-9_-]*$/;

/**
 * A sealed value could not be opened (malformed, unknown key id, tampered, wrong row).
 * Messages never hold plaintext or key material, so they are safe to log and return.
 */
export class SealError extends Error {
  override name = 'SealError';
  /** The key id the text names when the ring lacks that key (else undefined: malformed or changed text). */
  readonly unknownKid: string | undefined;

  constructor(message: string, unknownKid?: string) {
    super(message);
    this.unknownKid = unknownKid;
  }
}

/**
 * Why a sealed value did not open, for an operator: the key it needs, or text changed since it
 * was sealed. Never holds plaintext or key material.
 */
export function unopenedReason(err: SealError): string {
  if (err.unknownKid !== undefined) return `it is sealed with key id ${err.unknownKid}, which neither SVC_ENCRYPTION_KEY nor SVC_ENCRYPTION_KEYS_OLD holds`;
  return `its stored text was changed or damaged since it was sealed (${err.message.replace(/^cannot open sealed value: /, '')})`;
}

/** Associated data that binds a credential ciphertext to its row. */
export function credentialAad(name: string): string {
  return `credential:${name}`;
}

/** Associated data that binds an execution secret (a withheld access token) to its handle. */
export function executionSecretAad(handle: string): string {
  return `execution-secret:${handle}`;
}

/** Associated data that binds a keychain ciphertext to its row. */
export function keychainAad(cacheKey: string): string {
  return `keychain:${cacheKey}`;
}

/**
 * Associated data that binds what a gateway session or login in progress keeps sealed (under a
 * key derived from its cookie's value) to its row, named by the SHA-256 of that value.
 */
export function gatewaySessionAad(kind: 'session' | 'login', idHash: string): string {
  return `gateway-${kind}:${idHash}`;
}

/** The header is authenticated too, so the version or key id cannot be swapped unnoticed. */
function gcmAad(kid: string, aad: string): Buffer {
  return Buffer.from(`${SEAL_VERSION}.${kid}|${aad}`, 'utf8');
}

/**
 * Encrypts JSON-serialisable `value` with the ring's current key, bound to `aad`.
 * Returns `v1.<kid>.<nonce>.<ciphertext>.<tag>` (base64url parts); a fresh nonce every call.
 */
export function seal(keyring: Keyring, value: unknown, aad: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // The engine's message may quote property names of the secret; keep it out.
    throw new TypeError('cannot seal value: it is not JSON-serialisable');
  }
  if (json === undefined) throw new TypeError('cannot seal value: it is not JSON-serialisable');

  const kid = keyring.currentKid;
  const key = keyring.keyFor(kid);
  if (key === undefined) throw new SealError(`cannot seal value: current key id ${kid} missing from keyring`);
  const nonce = randomBytes(NONCE_LENGTH_BYTES);
  const cipher = createCipheriv(CIPHER, key, nonce, { authTagLength: TAG_LENGTH_BYTES });
  cipher.setAAD(gcmAad(kid, aad));
  const ciphertext = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [SEAL_VERSION, kid, nonce.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
}

interface SealedParts {
  kid: string;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** Strict base64url: re-encoding must give the same text, so no character can change silently. */
function decodePart(text: string, what: string): Buffer {
  if (!BASE64URL_PATTERN.test(text)) throw new SealError(`cannot open sealed value: malformed ${what}`);
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) throw new SealError(`cannot open sealed value: malformed ${what}`);
  return bytes;
}

function parseHeader(sealed: string): { parts: string[]; kid: string } {
  if (typeof sealed !== 'string') throw new SealError('cannot open sealed value: not a string');
  const parts = sealed.split('.');
  if (parts.length !== 5) throw new SealError('cannot open sealed value: malformed text');
  if (parts[0] !== SEAL_VERSION) throw new SealError('cannot open sealed value: unsupported format version');
  const kid = parts[1];
  if (!KID_PATTERN.test(kid)) throw new SealError('cannot open sealed value: malformed key id');
  return { parts, kid };
}

function parseSealed(sealed: string): SealedParts {
  const { parts, kid } = parseHeader(sealed);
  const nonce = decodePart(parts[2], 'nonce');
  const ciphertext = decodePart(parts[3], 'ciphertext');
  const tag = decodePart(parts[4], 'tag');
  if (nonce.length !== NONCE_LENGTH_BYTES) throw new SealError('cannot open sealed value: malformed nonce');
  if (tag.length !== TAG_LENGTH_BYTES) throw new SealError('cannot open sealed value: malformed tag');
  return { kid, nonce, ciphertext, tag };
}

/**
 * Decrypts text made by `seal` with whichever ring key has its key id, checking `aad`.
 * Throws `SealError` for an unknown key id, tampered text or a different `aad`.
 */
export function open(keyring: Keyring, sealed: string, aad: string): unknown {
  const { kid, nonce, ciphertext, tag } = parseSealed(sealed);
  const key = keyring.keyFor(kid);
  if (key === undefined) throw new SealError(`cannot open sealed value: unknown key id ${kid}`, kid);
  let plaintext: string;
  try {
    const decipher = createDecipheriv(CIPHER, key, nonce, { authTagLength: TAG_LENGTH_BYTES });
    decipher.setAAD(gcmAad(kid, aad));
    decipher.setAuthTag(tag);
    plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('cannot open sealed value: authentication failed');
  }
  try {
    return JSON.parse(plaintext);
  } catch {
    // Authenticated yet not JSON: only a foreign writer with our key could do this.
    throw new SealError('cannot open sealed value: payload is not JSON');
  }
}

/** Key id a sealed text was made with; rows whose id is not `keyring.currentKid` need a rekey. */
export function sealedKeyId(sealed: string): string {
  return parseHeader(sealed).kid;
}
