// Values for the JSON Schemas of the service's OpenAPI document (OpenAPI 3.0 subset that
// @valibot/to-json-schema writes): one the schema takes, and values it does not, so a test can
// send a request whose only fault is one field.
import * as v from 'valibot';

/** The parts of a schema object these helpers read. */
export type Schema = {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  format?: string;
  pattern?: string;
};

const schemaShape: v.GenericSchema<Schema> = v.looseObject({
  type: v.optional(v.string()),
  enum: v.optional(v.array(v.unknown())),
  anyOf: v.optional(v.array(v.lazy(() => schemaShape))),
  properties: v.optional(v.record(v.string(), v.lazy(() => schemaShape))),
  required: v.optional(v.array(v.string())),
  additionalProperties: v.optional(v.union([v.boolean(), v.lazy(() => schemaShape)])),
  items: v.optional(v.lazy(() => schemaShape)),
  minimum: v.optional(v.number()),
  maximum: v.optional(v.number()),
  minLength: v.optional(v.number()),
  maxLength: v.optional(v.number()),
  minItems: v.optional(v.number()),
  maxItems: v.optional(v.number()),
  nullable: v.optional(v.boolean()),
  format: v.optional(v.string()),
  pattern: v.optional(v.string()),
});

/** `raw` read as a schema object (throws on what is not one). */
export const asSchema = (raw: unknown): Schema => v.parse(schemaShape, raw ?? {});

/** The first alternative of a schema (`anyOf`), or the schema itself. */
const first = (s: Schema): Schema => s.anyOf?.[0] ?? s;

/**
 * A value `s` takes: an enumeration's first value, the bound nearest 1 for a number, an object of
 * its required properties. `hints` gives a property's value by name (a path that exists, an id).
 */
export function sampleOf(s: Schema, hints: Readonly<Record<string, unknown>> = {}, name = ''): unknown {
  if (name in hints) return hints[name];
  const one = first(s);
  if (one.enum?.length) return one.enum[0];
  switch (one.type) {
    case 'integer':
    case 'number':
      return Math.min(Math.max(one.minimum ?? 1, 1), one.maximum ?? 1);
    case 'boolean':
      return false;
    case 'string':
      if (one.format === 'date-time') return '2030-01-01T00:00:00Z';
      if (one.format === 'uri') return 'http://127.0.0.1:9/';
      if (one.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      return 'x'.repeat(Math.max(one.minLength ?? 1, 1));
    case 'array':
      return Array.from({ length: one.minItems ?? 0 }, () => sampleOf(one.items ?? {}, hints));
    case 'object':
      return Object.fromEntries((one.required ?? []).map((k) => [k, sampleOf(one.properties?.[k] ?? {}, hints, k)]));
    default:
      return {};
  }
}

const takes = (s: Schema, type: string): boolean => [s, ...(s.anyOf ?? [])].some((x) => x.type === type || (type === 'string' && x.enum !== undefined));

/**
 * Values `s` refuses, each with what it is: another JSON type, a number past its bounds or not
 * whole, a string past its length, a value outside its enumeration. A schema that takes any
 * value (`{}`) has none.
 */
export function wrongValuesOf(s: Schema): [string, unknown][] {
  const all = [s, ...(s.anyOf ?? [])];
  if (all.every((x) => x.type === undefined && x.enum === undefined)) return [];
  const out: [string, unknown][] = [];
  if (!takes(s, 'string')) out.push(['a string', '1']);
  if (!takes(s, 'integer') && !takes(s, 'number')) out.push(['a number', 7]);
  if (!takes(s, 'boolean')) out.push(['a boolean', true]);
  if (!takes(s, 'object')) out.push(['an object', { a: 1 }]);
  if (!takes(s, 'array')) out.push(['an array', ['x']]);
  if (!all.some((x) => x.nullable)) out.push(['null', null]);
  const int = all.find((x) => x.type === 'integer');
  if (int) {
    out.push(['a fraction', 1.5], ['1e300', 1e300]);
    if (int.minimum !== undefined) out.push(['below its minimum', int.minimum - 1]);
    if (int.maximum !== undefined && int.maximum < Number.MAX_SAFE_INTEGER) out.push(['past its maximum', int.maximum + 1]);
  }
  const str = all.find((x) => x.type === 'string');
  if (str?.maxLength !== undefined) out.push(['past its maxLength', 'y'.repeat(str.maxLength + 1)]);
  if (str?.minLength !== undefined && str.minLength > 0) out.push(['under its minLength', '']);
  if (str?.format === 'date-time') out.push(['not a time', 'yesterday'], ['a 13th month', '2020-13-01T00:00:00Z']);
  if (str?.format === 'uuid') out.push(['not a uuid', 'not-a-uuid']);
  if (str?.format === 'uri') out.push(['not a URI', 'not a uri']);
  const choices = all.find((x) => x.enum);
  if (choices && !takes(s, 'string')) out.push(['outside its enumeration', '__bogus__']);
  else if (choices && !all.some((x) => x.type === 'string' && !x.enum)) out.push(['outside its enumeration', '__bogus__']);
  const arr = all.find((x) => x.type === 'array');
  if (arr?.maxItems !== undefined && arr.maxItems < 10_000) out.push(['past its maxItems', Array.from({ length: arr.maxItems + 1 }, () => sampleOf(arr.items ?? {}))]);
  return out;
}

/**
 * Values `s` may take or refuse, but none may break the server: NUL and lone surrogates, a long
 * string, deep nesting, numbers JSON writes but JavaScript rounds.
 */
export function oddValuesOf(s: Schema): [string, unknown][] {
  const out: [string, unknown][] = [];
  if (takes(s, 'string')) out.push(['a NUL', 'a\u0000b'], ['a lone surrogate', 'a\ud800b'], ['100,000 characters', 'z'.repeat(100_000)], ['a right-to-left override', '\u202eabc'], ['../', '../../etc/passwd']);
  if (takes(s, 'object') || takes(s, 'array') || s.type === undefined) out.push(['nested 200 deep', nestedValue(200)], ['a NUL key', { 'a\u0000': 1 }]);
  if (takes(s, 'integer') || takes(s, 'number')) out.push(['-0', -0], ['2^53+1', 2 ** 53 + 2]);
  return out;
}

/** An object `depth` levels deep. */
export function nestedValue(depth: number): unknown {
  let out: unknown = 1;
  for (let i = 0; i < depth; i++) out = { a: out };
  return out;
}

// Odd values a field may take are many: each field gets `n` of them, the next field the next
// ones, so that every value is sent somewhere and a run stays short.
let rotation = 0;
/** `n` of `values`, starting where the last call left off. */
export function rotated<T>(values: readonly T[], n: number): T[] {
  if (values.length <= n) return [...values];
  rotation += n;
  return Array.from({ length: n }, (_x, i) => values[(rotation + i) % values.length]);
}

/** A body `base` with one field changed (`value`), missing (`missing`), or as JSON text (`text`). */
export type Fault = { field: string; what: string; body: string; refused: boolean };

const isObjectValue = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Bodies of `s` that are `base` (a value it takes) with one fault each, down to `depth` levels of
 * objects and array items (`events[0].step`): each field of a wrong value, `odd` of its odd
 * values, a number past 2^64 as JSON text, each required field missing, an unknown field where
 * the schema allows none. `field` is how a refusal names it.
 */
export function faultsOf(s: Schema, base: Record<string, unknown>, hints: Readonly<Record<string, unknown>>, prefix = '', depth = 2): Fault[] {
  const out: Fault[] = [];
  const label = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const withValue = (name: string, value: unknown) => JSON.stringify({ ...base, [name]: value });
  for (const [name, ps] of Object.entries(s.properties ?? {})) {
    const field = label(name);
    for (const [what, value] of wrongValuesOf(ps)) out.push({ field, what, body: withValue(name, value), refused: true });
    for (const [what, value] of rotated(oddValuesOf(ps), 2)) out.push({ field, what, body: withValue(name, value), refused: false });
    if (ps.type === 'integer' || ps.anyOf?.some((x) => x.type === 'integer')) {
      out.push({ field, what: 'past 2^64 as JSON text', body: withValue(name, 0).replace(`"${name}":0`, `"${name}":99999999999999999999999`), refused: true });
    }
    if (depth === 0) continue;
    const one = ps.anyOf?.[0] ?? ps;
    if (one.type === 'object' && one.properties) {
      const inner = sampleOf(one, hints);
      if (isObjectValue(inner)) {
        for (const f of faultsOf(one, inner, hints, field, depth - 1)) out.push({ ...f, body: withValue(name, '\u0001').replace('"\\u0001"', () => f.body) });
      }
    }
    const item = one.type === 'array' ? one.items : undefined;
    if (item?.properties) {
      const inner = sampleOf(item, hints);
      if (isObjectValue(inner)) {
        // JSON.parse would round a number past 2^53: the item's text goes in as it is.
        for (const f of faultsOf(item, inner, hints, `${field}[0]`, depth - 1)) out.push({ ...f, body: withValue(name, ['\u0001']).replace('["\\u0001"]', () => `[${f.body}]`) });
      }
    }
  }
  for (const name of s.required ?? []) {
    out.push({ field: label(name), what: 'missing', body: JSON.stringify(Object.fromEntries(Object.entries(base).filter(([k]) => k !== name))), refused: true });
  }
  out.push({ field: label('zz_unknown'), what: 'an unknown field', body: withValue('zz_unknown', 1), refused: s.additionalProperties === false });
  return out;
}
