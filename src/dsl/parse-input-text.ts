import type { SchemaTypeName } from '../crypto/validate-against-schema.ts';

// Text typed for a declared input (`svc run --set n=3`, a console form field) read as its type.
// Pure: the console bundles it.

/** A decimal number as JSON and people write it: sign, digits, fraction, exponent. */
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

export type ParsedInputText = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Reads `text` as a value of `type` (undefined: a string, as for an undeclared field): integer
 * and number as decimal numbers, boolean as true/false, object and array as JSON. A text that is
 * not of the type comes back as a message saying what was expected.
 */
export function parseInputText(type: SchemaTypeName | undefined, text: string): ParsedInputText {
  const trimmed = text.trim();
  switch (type) {
    case undefined:
    case 'string':
      return { ok: true, value: text };
    case 'integer':
      return /^[-+]?\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed)) ? { ok: true, value: Number(trimmed) } : { ok: false, message: `must be integer, got ${JSON.stringify(text)}` };
    case 'number': {
      // Decimal only, as the doc says: Number() also reads 0x10, 0b1 and 0o7 (16, 1, 7).
      const n = Number(trimmed);
      return DECIMAL.test(trimmed) && Number.isFinite(n) ? { ok: true, value: n } : { ok: false, message: `must be number, got ${JSON.stringify(text)}` };
    }
    case 'boolean':
      return trimmed === 'true' || trimmed === 'false' ? { ok: true, value: trimmed === 'true' } : { ok: false, message: `must be boolean (true or false), got ${JSON.stringify(text)}` };
    case 'object':
    case 'array': {
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch {
        return { ok: false, message: `must be ${type} (JSON), got ${JSON.stringify(text)}` };
      }
      const isArray = Array.isArray(value);
      const fits = type === 'array' ? isArray : typeof value === 'object' && value !== null && !isArray;
      return fits ? { ok: true, value } : { ok: false, message: `must be ${type} (JSON), got ${JSON.stringify(text)}` };
    }
  }
}
