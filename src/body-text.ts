import { ServiceError } from './errors.ts';

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
const REPLACEMENT = '\ufffd';
const REPLACEMENT_BYTES = Buffer.from(REPLACEMENT);

/**
 * The byte offset of the first sequence in `raw` that is not UTF-8, if there is one. A lenient
 * decoding is exact up to its first replacement character that `raw` does not itself hold as
 * EF BF BD, so that prefix's UTF-8 length is where the bad bytes start.
 */
export function invalidUtf8At(raw: Buffer): number | undefined {
  const text = raw.toString('utf8');
  for (let i = text.indexOf(REPLACEMENT); i !== -1; i = text.indexOf(REPLACEMENT, i + 1)) {
    const at = Buffer.byteLength(text.slice(0, i));
    if (!raw.subarray(at, at + REPLACEMENT_BYTES.length).equals(REPLACEMENT_BYTES)) return at;
  }
  return undefined;
}

/**
 * A JSON body's text (RFC 8259: JSON exchanged between systems is UTF-8). Bytes that are not
 * UTF-8 are refused, 400, where node's decoding would turn each into U+FFFD and the stored
 * string would silently differ from what was sent.
 */
export function bodyText(raw: Buffer): string {
  try {
    return STRICT_UTF8.decode(raw);
  } catch {
    const at = invalidUtf8At(raw);
    throw new ServiceError('bad_request', { message: `the body is not valid UTF-8${at === undefined ? '' : ` (at byte ${at})`}: send JSON as UTF-8 text` });
  }
}
