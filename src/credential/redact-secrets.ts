import type { ResolvedCredential } from '../protocol.ts';

// Credential fields whose values are secrets. Matching on the key (not every string of the
// credential) keeps names such as host or user readable in database error messages. `headers`
// and `query` are a custom credential's: every value under them is sent as a secret.
const SECRET_KEY_PATTERN = /pass|secret|token|key|private|credential|connection_string|authorization|cookie|^url$|^servers$|^creds$|^dsn$|^value$|^headers$|^query$/i;
// Keychain values are secrets as a whole, but for these fields of a token answer, which say how
// the token is used rather than what it is (masking "Bearer" everywhere would hide nothing).
const KEYCHAIN_PUBLIC_FIELDS = new Set(['token_type', 'expires_in', 'expires_at', 'scope', 'ext_expires_in', 'refresh_expires_in']);

/** What a secret is replaced by, like GitHub Actions' log masking. */
export const SECRET_MASK = '***';
/**
 * Values shorter than this are not masked: masking every "abc" or "1" in an output would hide the
 * output and protect little (such a secret is guessed faster than read).
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * The secrets a worker injected into one command (credential data, keychain values, tokens it
 * obtained), and the masking of every occurrence of them, or of their common encodings (base64,
 * URL and form encoding, JSON string escaping), in text. With nothing added, `mask` costs nothing.
 */
export class SecretMask {
  readonly #secrets = new Set<string>();
  #pattern: RegExp | null | undefined = null; // undefined: to be rebuilt; null: nothing to mask

  constructor(secrets: Iterable<string> = []) {
    this.add(...secrets);
  }

  /** Adds secret values; those shorter than MIN_SECRET_LENGTH are ignored. */
  add(...values: readonly string[]): void {
    for (const value of values) {
      if (value.length < MIN_SECRET_LENGTH || this.#secrets.has(value)) continue;
      this.#secrets.add(value);
      this.#pattern = undefined;
    }
  }

  /** Adds the secret fields of a credential (see credentialSecrets). */
  addCredential(credential: ResolvedCredential | undefined): void {
    this.add(...credentialSecrets(credential));
  }

  /** Adds every string of resolved keychain entries (`{entry: {field: value}}`), but for their public fields. */
  addKeychain(entries: Record<string, unknown>): void {
    const visit = (value: unknown, key: string): void => {
      if (typeof value === 'string') {
        if (!KEYCHAIN_PUBLIC_FIELDS.has(key)) this.add(value);
      } else if (Array.isArray(value)) {
        for (const item of value) visit(item, key);
      } else if (value !== null && typeof value === 'object') {
        for (const [k, item] of Object.entries(value)) visit(item, k);
      }
    };
    for (const entry of Object.values(entries)) visit(entry, '');
  }

  get empty(): boolean {
    return this.#secrets.size === 0;
  }

  /** `text` with every secret (and encoding of one) replaced by SECRET_MASK; the same string when none occurs. */
  mask(text: string): string {
    if (this.#pattern === undefined) this.#pattern = buildPattern(this.#secrets);
    return this.#pattern === null ? text : text.replace(this.#pattern, SECRET_MASK);
  }

  /** True when `text` holds a secret (or an encoding of one), as `mask` would replace it. */
  holds(text: string): boolean {
    return this.mask(text) !== text;
  }

  /**
   * `text` that a cap cut off (a shell task's output kept up to its limit) masked as `mask` does,
   * and besides its end when that is the beginning of a secret or of one of its forms (at least
   * MIN_SECRET_LENGTH characters of it, any case): the cut left the secret in part, which the
   * mask, applied later to the whole report, no longer sees as one.
   */
  maskCut(text: string): string {
    const masked = this.mask(text);
    // A cut inside a character leaves U+FFFD after the secret's first characters.
    const whole = masked.replace(/\uFFFD+$/, '');
    let longest = 0;
    const end = whole.toLowerCase();
    for (const secret of this.#secrets) {
      for (const form of encodings(secret)) {
        const start = form.toLowerCase();
        for (let length = Math.min(start.length - 1, end.length); length >= Math.max(MIN_SECRET_LENGTH, longest + 1); length--) {
          if (end.endsWith(start.slice(0, length))) {
            longest = length;
            break;
          }
        }
      }
    }
    return longest === 0 ? masked : `${whole.slice(0, whole.length - longest)}${SECRET_MASK}`;
  }
}

// One alternation of every form of every secret, longest first, so that a secret inside a longer
// one (a password inside its connection string) does not leave the rest of the longer one showing.
function buildPattern(secrets: ReadonlySet<string>): RegExp | null {
  const forms = new Set<string>();
  for (const secret of secrets) for (const form of [...encodings(secret), ...base64Within(secret)]) forms.add(form);
  if (forms.size === 0) return null;
  const ordered = [...forms].sort((a, b) => b.length - a.length).map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Ignoring case: a URL's host is lower-cased where it is parsed (an http task's connection
  // error quotes `http://<secret>.example/` so), and a chance match of another case hides little.
  return new RegExp(ordered.join('|'), 'gi');
}

/** The forms a secret is seen in when a target echoes what it was sent. */
function encodings(secret: string): string[] {
  const base64 = Buffer.from(secret).toString('base64');
  const json = JSON.stringify(secret).slice(1, -1);
  // Other encoders escape more than JSON.stringify: PHP's json_encode every '/' (and, as Python's
  // json.dumps, every character past ASCII as \uXXXX, surrogate pairs for the rest).
  const ascii = (text: string) => text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const slashes = json.replace(/\//g, '\\/');
  return [
    secret,
    json,
    slashes,
    ascii(json),
    ascii(slashes),
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    base64,
    base64.replace(/=+$/, ''),
    Buffer.from(secret).toString('base64url'),
    urlPathForm(secret),
  ];
}

// The shortest part of a secret's base64 within a longer text that is masked: a shorter one would
// match chance text (the pattern ignores case).
const MIN_BASE64_WITHIN = 8;

/**
 * The characters `secret` is always written as inside the base64 of a longer text, at each of the
 * three places its first byte may have in a 3-byte group (`Basic <user:password>` built with
 * `| b64encode`, an echoed `Bearer <token>`), in base64 and base64url: its own base64 differs
 * there, and the characters its first and last bytes share with their neighbours are left out.
 */
function base64Within(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [0, 1, 2].flatMap((k) => {
    const text = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const inner = text.slice(Math.ceil((k * 8) / 6), Math.floor(((k + bytes.length) * 8) / 6));
    return inner.length < MIN_BASE64_WITHIN ? [] : [inner, inner.replace(/\+/g, '-').replace(/\//g, '_')];
  });
}

/**
 * `secret` as a URL's path holds it once parsed (an http task's error quotes the path so): its
 * spaces, quotes, angle brackets, braces, `^`, controls and non-ASCII characters percent-encoded
 * (the WHATWG path set, as node's URL has it), the rest, `/` and `%` included, as it is (unlike
 * encodeURIComponent).
 */
function urlPathForm(secret: string): string {
  return secret.replace(/[\u{0}-\u{20}"<>^`{}\u{7f}-\u{10ffff}]/gu, (c) => Buffer.from(c).toString('hex').toUpperCase().replace(/../g, '%$&'));
}

/**
 * Every secret string held by a credential (nested objects included), the password of any URL in
 * them, and for a `basic` credential its `username:password`, whose base64 is the Authorization header.
 */
export function credentialSecrets(credential: ResolvedCredential | undefined): string[] {
  if (!credential) return [];
  const secrets: string[] = [];
  const visit = (value: unknown, secretKey: boolean): void => {
    if (typeof value === 'string') {
      if (secretKey && value.length > 0) secrets.push(value, ...urlSecrets(value));
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, secretKey);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) visit(item, secretKey || SECRET_KEY_PATTERN.test(key));
    }
  };
  visit(credential.data, false);
  const { username, user, password } = credential.data;
  const name = typeof username === 'string' ? username : user;
  if (credential.type === 'basic' && typeof name === 'string' && typeof password === 'string' && password) secrets.push(`${name}:${password}`);
  return secrets;
}

/** The password (raw and decoded) of a URL-like string such as a connection string. */
export function urlSecrets(text: string): string[] {
  try {
    const { password } = new URL(text);
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    return [];
  }
}

/** `text` with every occurrence of each secret (and its encodings) masked; see SecretMask. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return new SecretMask(secrets).mask(text);
}
