// The one place request input is checked before anything else sees it: JSON bodies (parsed here),
// path parameters and query strings. What gets through can be stored: no NUL, no lone surrogate,
// no nesting past MAX_JSON_DEPTH, no number JavaScript cannot hold exactly.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { waitUnlessAborted } from '../abortable-wait.ts';
import { ServiceError } from '../errors.ts';
import { bodyText } from '../body-text.ts';
import { NUL_PROBLEM, pathSegment, SURROGATE_PROBLEM, unstorableText } from '../find-unstorable.ts';

/** Deepest nesting of arrays and objects in a JSON body; the body itself is level 1. */
export const MAX_JSON_DEPTH = 64;
/** An oversized body is read and thrown away up to this much before the 413 (see discardBody). */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;
/** ...and for at most this long. */
export const DISCARD_TIMEOUT_MS = 10_000;

/** Where and why input is refused: `path` as `payload.a[0]["b c"]` (strings escaped), '' for the whole value. */
export type InputProblem = { path: string; message: string };

const DEPTH_MESSAGE = `is nested deeper than ${MAX_JSON_DEPTH} levels`;
const UNSAFE_INTEGER_MESSAGE = `is an integer beyond what JavaScript holds exactly (±${Number.MAX_SAFE_INTEGER})`;
const OUT_OF_RANGE_MESSAGE = 'is a number out of range';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_U = 0x75;
// Integer literals shorter than this are below 2^53 whatever their digits.
const SAFE_INTEGER_DIGITS = 15;

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;
// A NUL or surrogate escape (or the text `\\u0000`, an escaped backslash: a false alarm costs only time).
// A regular expression: String.prototype.includes of a two-character pattern was 50 times slower here.
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** The code unit of a `\uXXXX` escape whose backslash is at `at`, or -1 when it is not one. */
function unicodeEscape(text: string, at: number): number {
  if (text.charCodeAt(at + 1) !== LOWER_U) return -1;
  const hex = text.slice(at + 2, at + 6);
  return /^[0-9a-fA-F]{4}$/.test(hex) ? parseInt(hex, 16) : -1;
}

/**
 * Checks the escapes of the string whose opening quote is at `open`: returns its closing quote's
 * index (text.length when unterminated: JSON.parse refuses it), or the message of the first
 * escape that must not be stored. Plain characters are skipped by indexOf, never looked at one by
 * one; `next.slash` remembers the next backslash of the text, so no part is searched twice.
 */
function scanString(text: string, open: number, next: { slash: number }): { end: number; problem?: string } {
  let i = open + 1;
  let end = -1;
  for (;;) {
    // Searched again only when an escape took us past it (it was an escaped quote, \").
    if (end < i) {
      const quote = text.indexOf('"', i);
      end = quote === -1 ? text.length : quote;
    }
    if (next.slash < i) {
      const found = text.indexOf('\\', i);
      next.slash = found === -1 ? Infinity : found;
    }
    const slash = next.slash;
    if (slash > end) return { end };
    const unit = unicodeEscape(text, slash);
    if (unit === 0) return { end, problem: NUL_PROBLEM };
    if (unit >= 0xdc00 && unit <= 0xdfff) return { end, problem: SURROGATE_PROBLEM };
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = text.charCodeAt(slash + 6) === BACKSLASH ? unicodeEscape(text, slash + 6) : -1;
      if (low < 0xdc00 || low > 0xdfff) return { end, problem: SURROGATE_PROBLEM };
      i = slash + 12;
    } else i = slash + (unit >= 0 ? 6 : 2);
  }
}

/** The index of the closing quote of the string opened at `open` (text.length when unterminated). */
function stringEnd(text: string, open: number): number {
  for (let q = open; ; ) {
    q = text.indexOf('"', q + 1);
    if (q === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
}

/** The end (exclusive) of the number literal at `start`, and why it is refused, if it is. */
function scanNumber(text: string, start: number): { end: number; problem?: string } {
  let i = start;
  if (text.charCodeAt(i) === MINUS) i++;
  const digitsFrom = i;
  while (isDigit(text.charCodeAt(i))) i++;
  const integerDigits = i - digitsFrom;
  let integer = true;
  if (text.charCodeAt(i) === DOT) {
    integer = false;
    i++;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  let exponent = false;
  const c = text.charCodeAt(i);
  if (c === LOWER_E || c === UPPER_E) {
    integer = false;
    exponent = true;
    i++;
    const sign = text.charCodeAt(i);
    if (sign === MINUS || sign === 0x2b) i++;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  // Only long or exponent literals can overflow or lose integer precision: the rest costs nothing more.
  if (!exponent && integerDigits <= SAFE_INTEGER_DIGITS) return { end: i };
  const value = Number(text.slice(start, i));
  if (!Number.isFinite(value)) return { end: i, problem: OUT_OF_RANGE_MESSAGE };
  if (integer && !Number.isSafeInteger(value)) return { end: i, problem: UNSAFE_INTEGER_MESSAGE };
  return { end: i };
}

/**
 * Scans JSON text, before it is parsed, for what must not be stored: NUL or lone surrogates
 * (escaped; raw ones are invalid JSON or cannot come from UTF-8), nesting past MAX_JSON_DEPTH,
 * and numbers that overflow or integers past 2^53-1. One pass, no recursion, no allocation on
 * the way; the path of a problem is worked out only when there is one. Syntax is left to JSON.parse.
 */
export function scanJsonText(text: string): InputProblem | undefined {
  let depth = 0;
  const next = { slash: -1 };
  // NUL and surrogates can only come as such escapes: without any, strings are merely skipped.
  const suspectEscapes = SUSPECT_ESCAPE.test(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      if (!suspectEscapes) {
        i = stringEnd(text, i);
        continue;
      }
      const s = scanString(text, i, next);
      if (s.problem) return { path: pathAt(text, i), message: s.problem };
      i = s.end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return { path: pathAt(text, i), message: DEPTH_MESSAGE };
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === MINUS || isDigit(c)) {
      const n = scanNumber(text, i);
      if (n.problem) return { path: pathAt(text, i), message: n.problem };
      i = n.end - 1;
    }
  }
  return undefined;
}

type Frame = { array: boolean; key: string | undefined; index: number; expectKey: boolean };

/**
 * The path of the value (or key) that starts at `offset` of JSON text, for error details. Only
 * called for a refused body, and stops at `offset`, which is at most MAX_JSON_DEPTH + 1 levels down.
 */
function pathAt(text: string, offset: number): string {
  const frames: Frame[] = [];
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    const top = frames.at(-1);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (top && !top.array && top.expectKey) {
        top.key = decodeKey(text.slice(i, end + 1));
        top.expectKey = false;
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) frames.push({ array: c === OPEN_BRACKET, key: undefined, index: 0, expectKey: c === OPEN_BRACE });
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) frames.pop();
    else if (c === COMMA && top) {
      if (top.array) top.index++;
      else top.expectKey = true;
    } else if (c === COLON && top) top.expectKey = false;
  }
  const top = frames.at(-1);
  // The refused string is itself a key: name it (escaped) rather than its object.
  if (top && !top.array && top.expectKey && text.charCodeAt(offset) === QUOTE) {
    top.key = decodeKey(text.slice(offset, stringEnd(text, offset) + 1));
  }
  return frames.map((f, n) => (f.array ? `[${f.index}]` : f.key === undefined ? '' : pathSegment(f.key, n === 0))).join('');
}

function decodeKey(quoted: string): string {
  try {
    const key: unknown = JSON.parse(quoted);
    return typeof key === 'string' ? key : quoted;
  } catch {
    return quoted;
  }
}

// find-my-way names a wildcard parameter '*'; the catalog's is a playbook path.
const paramName = (name: string): string => (name === '*' ? 'path' : name);

/**
 * Checks path parameters and the query string (as fastify decoded them): NUL and lone surrogates
 * in names or values, and query text whose percent-encoding is not UTF-8 (fast-querystring keeps
 * such a value raw, so `%E0%A4%A` would be taken for text).
 */
export function urlProblem(params: unknown, query: unknown, rawQuery: string): { part: 'params' | 'querystring'; problem: InputProblem; status: 400 | 422 } | undefined {
  for (const [part, values] of [
    ['params', params],
    ['querystring', query],
  ] as const) {
    if (!values || typeof values !== 'object') continue;
    for (const [name, value] of Object.entries(values)) {
      const shownName = part === 'params' ? paramName(name) : name;
      const keyProblem = unstorableText(name);
      if (keyProblem) return { part, problem: { path: JSON.stringify(name).slice(1, -1), message: keyProblem }, status: 422 };
      for (const v of Array.isArray(value) ? value : [value]) {
        const problem = typeof v === 'string' ? unstorableText(v) : undefined;
        if (problem) return { part, problem: { path: shownName, message: problem }, status: 422 };
      }
    }
  }
  if (!rawQuery.includes('%')) return undefined;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    try {
      decodeURIComponent(pair.replaceAll('+', ' '));
    } catch {
      let name = rawName;
      try {
        name = decodeURIComponent(rawName);
      } catch {
        // the name itself is the broken part: show it as sent
      }
      return { part: 'querystring', problem: { path: name, message: 'is not percent-encoded UTF-8' }, status: 400 };
    }
  }
  return undefined;
}

const describe = (p: InputProblem): string => (p.path ? `${p.path}: ${p.message}` : p.message);

/** The error for refused input, in the shape of the schema validation errors (validation.ts). */
function inputError(part: string, problem: InputProblem, status: 400 | 422 = 422): ServiceError {
  return new ServiceError(status === 400 ? 'bad_request' : 'unprocessable', { message: `invalid ${part}`, errors: [describe(problem)] });
}

/**
 * Reads what is left of a request body (up to DISCARD_LIMIT_BYTES and DISCARD_TIMEOUT_MS) and
 * throws it away: an answer sent while the client still writes is lost to most clients (the
 * server closes the socket, their next write fails with EPIPE before they read anything).
 */
export function discardBody(raw: IncomingMessage): Promise<void> {
  if (raw.readableEnded || raw.destroyed) return Promise.resolve();
  if (Number(raw.headers['content-length']) > DISCARD_LIMIT_BYTES) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    // Ends the bounded wait below once the body is read (or the limit passed).
    const reading = new AbortController();
    const done = () => {
      reading.abort();
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('close', done);
      raw.off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DISCARD_LIMIT_BYTES) done();
    };
    void waitUnlessAborted(DISCARD_TIMEOUT_MS, reading.signal).then((timedOut) => {
      if (timedOut) done();
    });
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

// Keys that JavaScript gives a meaning (prototype poisoning), also when written with escapes; the
// same test as fastify's default parser (secure-json-parse) uses to decide whether to look.
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
const CONSTRUCTOR_KEY = /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;

/** The path of a `__proto__` key or a `constructor` holding `prototype`, if any. Recursion is bounded: the value passed scanJsonText. */
function poisonedKeyPath(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = poisonedKeyPath(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    const here = path + pathSegment(key, path === '');
    if (key === '__proto__') return here;
    if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return here;
    const found = poisonedKeyPath(child, here);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * JSON text read as a body is: `refused` for what must not be stored (scanJsonText, 422) or a key
 * that would poison prototypes (400), `syntax` (the message, with the position, never the text)
 * when JSON.parse refuses it, else its `value`. One rule for API bodies (parseJsonBody), webhook
 * bodies and NATS messages (src/triggers/nats-message-fire.ts).
 */
export type JsonRead = { value: unknown } | { syntax: string } | { refused: InputProblem; status: 400 | 422 };

/** Reads JSON text (see JsonRead): scanJsonText first, then JSON.parse, then the keys. */
export function readJsonText(text: string): JsonRead {
  const problem = scanJsonText(text);
  if (problem) return { refused: problem, status: 422 };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
    return { syntax: `is not valid JSON${at === undefined ? '' : ` (at character ${at})`}` };
  }
  if (PROTO_KEY.test(text) || CONSTRUCTOR_KEY.test(text)) {
    const path = poisonedKeyPath(value, '');
    if (path !== undefined) return { refused: { path, message: 'is a key that would change an object prototype (__proto__, constructor.prototype)' }, status: 400 };
  }
  return { value };
}

/**
 * Parses a JSON body (readJsonText): 422 for what cannot be stored, 400 for bad syntax or a key
 * that would poison prototypes.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new ServiceError('bad_request', 'the body is empty: send a JSON value, or no content-type');
  const read = readJsonText(text);
  if ('syntax' in read) throw new ServiceError('bad_request', `the body ${read.syntax}`);
  if ('refused' in read) throw inputError('body', read.refused, read.status);
  return read.value;
}

/**
 * Installs the guard on an app: the only body parser, for JSON (parseJsonBody), and a
 * preValidation check of path parameters and query strings (urlProblem). Runs after the auth
 * hooks (onRequest), before schema validation and handlers.
 */
export function installInputGuard(app: FastifyInstance): void {
  // Every body of the API is JSON: a text/plain one is refused (415) rather than taken as a string.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // Read as bytes: node's decoding of text would turn bytes that are not UTF-8 into U+FFFD unseen.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req: FastifyRequest, raw: Buffer, done) => {
    let value: unknown;
    try {
      value = parseJsonBody(bodyText(raw));
      // fastify hands "no body" to validation as null: a JSON null would pass as none, where
      // every other value that is not an object is refused (no route of the API takes null).
      if (value === null) throw new ServiceError('unprocessable', { message: 'invalid body', errors: ['body: must be a JSON object'] });
    } catch (err) {
      return done(err instanceof Error ? err : new Error(String(err)), undefined);
    }
    done(null, value);
  });
  app.addHook('preValidation', async (req) => {
    const q = req.url.indexOf('?');
    const found = urlProblem(req.params, req.query, q === -1 ? '' : req.url.slice(q + 1));
    if (found) throw inputError(found.part, found.problem, found.status);
  });
}
