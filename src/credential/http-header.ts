// What fetch accepts as a request header (the Fetch standard's, which undici enforces by throwing
// a TypeError that quotes the value): a name that is an RFC 9110 token, a value of Latin-1
// characters without CR, LF or NUL. Checked first, a rendered header or a credential's that is not
// one fails its task naming the field, not as a bug of the tool's, and its value is never quoted.

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Latin-1 (what a ByteString holds) without NUL, CR and LF.
const HEADER_VALUE = /^[^\0\r\n\u0100-\uffff]*$/;

/** True when `name` may name a request header. */
export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name);
}

/** True when `value` may be a request header's value. */
export function isHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}

/** What the names and values must be, in words, for messages. */
export const HEADER_NAME_TEXT = 'a header name (letters, digits and !#$%&\'*+-.^_`|~)';
export const HEADER_VALUE_TEXT = 'a header value (Latin-1 text without line breaks or NUL)';
