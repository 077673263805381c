import type { SecretMask } from '../credential/redact-secrets.ts';
import type { TaskOutcome } from './tools/types.ts';

/**
 * Levels of nesting kept below a task outcome; a deeper value is stored as its JSON text. The
 * server refuses deeper requests, and a report carries an outcome five levels down.
 */
export const STORABLE_MAX_DEPTH = 32;
/** Paths listed in an outcome's `escaped`; more are counted in one last entry. */
export const ESCAPED_PATHS_MAX = 10;
/** What a NUL character becomes: PostgreSQL's text and jsonb cannot hold one. */
export const NUL_ESCAPE = '\\u0000';
const TOO_DEEP = '[not stored: nested too deep]';
// From here on JSON.stringify writes numbers with an exponent, as floats.
const JSON_EXPONENT_FROM = 1e21;

/**
 * `value` as PostgreSQL can store it in jsonb and text, with every secret of `mask` masked (in
 * keys too): NUL becomes the six characters `\u0000`, a lone surrogate U+FFFD (what a UTF-8
 * decoder makes of one), a bigint or an integer literal past 2^53 its decimal text, a value nested deeper than
 * STORABLE_MAX_DEPTH its JSON text (a placeholder for a cycle), so the result always serialises.
 * `escaped` lists the paths changed to be storable (not the masked ones). Unchanged parts are the
 * same objects; with no secrets and nothing to escape, nothing is copied.
 */
export function storable(value: unknown, mask?: SecretMask): { value: unknown; escaped: string[] } {
  const walker = new Walker(mask && !mask.empty ? mask : undefined);
  const out = walker.walk(value, 0);
  return { value: out, escaped: walker.escaped() };
}

/** A task outcome made storable (see storable), flagged with `escaped: [paths]` when anything was escaped. */
export function storableOutcome(outcome: TaskOutcome, mask?: SecretMask): TaskOutcome {
  const { value, escaped } = storable(outcome, mask);
  const stored = value as TaskOutcome; // the walk keeps every shape: an outcome stays an outcome
  return escaped.length ? { ...stored, escaped } : stored;
}

class Walker {
  readonly #mask: SecretMask | undefined;
  readonly #path: (string | number)[] = [];
  readonly #escaped: string[] = [];
  #count = 0;

  constructor(mask: SecretMask | undefined) {
    this.#mask = mask;
  }

  escaped(): string[] {
    const more = this.#count - this.#escaped.length;
    return more > 0 ? [...this.#escaped, `(${more} more)`] : this.#escaped;
  }

  walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.#text(value);
    if (typeof value === 'bigint') {
      // JSON has no bigint: JSON.stringify would throw, and the report could never be sent.
      this.#note();
      return value.toString();
    }
    if (typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value) && Math.abs(value) < JSON_EXPONENT_FROM) {
      // Already rounded (a JSON.parse of 2^60 + 1, a bigint column as a number), but JSON.stringify
      // writes it as an integer literal past 2^53, which the server refuses (api/input-guard.ts).
      this.#note();
      return String(value);
    }
    if (value === null || typeof value !== 'object') return value;
    // Dates, Buffers and the like are stored as what their toJSON gives, so that is what is checked.
    if ('toJSON' in value && typeof value.toJSON === 'function') {
      const json: unknown = value.toJSON();
      const stored = this.walk(json, depth + 1);
      return stored === json ? value : stored;
    }
    if (depth >= STORABLE_MAX_DEPTH) return this.#flatten(value);
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        this.#path.push(i);
        const item = this.walk(value[i], depth + 1);
        this.#path.pop();
        if (item !== value[i]) (copy ??= value.slice())[i] = item;
      }
      return copy ?? value;
    }
    const record = value as Record<string, unknown>; // any object's own keys, as JSON.stringify reads them
    const keys = Object.keys(record);
    let copy: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      this.#path.push(key);
      const storedKey = this.#key(key, item);
      const storedItem = this.walk(item, depth + 1);
      this.#path.pop();
      if (copy === undefined && (storedKey !== key || storedItem !== item)) {
        copy = {};
        for (let j = 0; j < i; j++) copy[keys[j]] = record[keys[j]];
      }
      if (copy !== undefined) copy[storedKey] = storedItem;
    }
    return copy ?? value;
  }

  /**
   * A key as stored: its text (see #text), and a key that would change an object's prototype where
   * the server reads the report (`__proto__`, `constructor` over an object with a `prototype`: the
   * server refuses such a body, api/input-guard.ts) with its first character written as the six
   * characters of its JSON escape (`\\u005f_proto__`), as NUL is.
   */
  #key(key: string, item: unknown): string {
    const text = this.#text(key);
    const poisons = text === '__proto__' || (text === 'constructor' && item !== null && typeof item === 'object' && Object.hasOwn(item, 'prototype'));
    if (!poisons) return text;
    this.#note();
    return `\\u${text.charCodeAt(0).toString(16).padStart(4, '0')}${text.slice(1)}`;
  }

  #text(text: string): string {
    const masked = this.#mask ? this.#mask.mask(text) : text;
    // Two native scans: the common case (nothing to escape) allocates nothing.
    if (!masked.includes('\u0000') && masked.isWellFormed()) return masked;
    this.#note();
    return escapeText(masked);
  }

  // JSON.stringify writes NUL and lone surrogates as escape sequences: its text is storable as it is.
  #flatten(value: object): string {
    this.#note();
    try {
      const json = JSON.stringify(value);
      return this.#mask ? this.#mask.mask(json) : json;
    } catch {
      return TOO_DEEP; // deeper than the JSON encoder's stack, or a cycle
    }
  }

  // A path names keys, which may hold what it reports: it is masked and escaped like any text.
  #note(): void {
    if (this.#count++ >= ESCAPED_PATHS_MAX) return;
    const path = this.#path.join('.');
    this.#escaped.push(escapeText(this.#mask ? this.#mask.mask(path) : path));
  }
}

function escapeText(text: string): string {
  return text.replaceAll('\u0000', NUL_ESCAPE).toWellFormed();
}
