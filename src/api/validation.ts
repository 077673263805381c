import { toJsonSchema, type ConversionConfig } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { closest } from '../dsl/unknown-field-message.ts';
import { ServiceError } from '../errors.ts';
import { isObject } from '../objects.ts';
import { plainRecordOf } from '../own-keys-record.ts';

type AnySchema = v.GenericSchema;

/** Largest id: bigint columns hold more, but ids travel as JSON numbers, exact only up to 2^53-1. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
/** Largest value of a PostgreSQL `integer` column (versions, capacities, attempts). */
export const MAX_INT4 = 2_147_483_647;

const rangeMessage = (min: number, max: number) => `must be an integer from ${min} to ${max}`;

/** An integer in [min, max] sent as a JSON number: what reaches SQL fits its column. */
export function integerIn(min: number, max: number) {
  const message = rangeMessage(min, max);
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
}

/**
 * An integer in [min, max] sent as text (a path parameter, a query string), output as a number:
 * digits with an optional sign, then the same bounds, so `99999999999999999999999` is refused
 * here, naming its field, and never reaches SQL.
 */
export function integerText(min: number, max: number) {
  const message = rangeMessage(min, max);
  return v.pipe(v.string(message), v.regex(/^-?\d+$/, message), v.transform(Number), v.minValue(min, message), v.maxValue(max, message));
}

/** One of `values` (a request's enumerations): refused naming them all. */
export function oneOf<const T extends readonly string[]>(values: T) {
  return v.picklist(values, `must be one of ${values.join(', ')}`);
}

/**
 * An object of `entries` and no other field (additionalProperties false in the OpenAPI
 * document): for a body that replaces what it names, where a misspelt field would otherwise be
 * dropped and the part it meant removed. Another field is refused naming it:
 * `rates: unknown field (did you mean 'rate'?)`, or `…: unknown field (known: a, b)`.
 */
export function exactObject<const E extends v.ObjectEntries>(entries: E) {
  const known = Object.keys(entries);
  // valibot's own words ('Invalid key: Expected "limit" but received undefined') name no rule.
  return v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return unknownFieldMessage(String(issue.input), known);
    if (issue.path?.length && issue.input === undefined) return 'is required';
    return issue.expected === 'Object' ? 'must be a JSON object' : issue.message;
  });
}

/** `unknown field (did you mean 'x'?)` when a known name is close to `name`, else `unknown field (known: a, b)`. */
export function unknownFieldMessage(name: string, known: readonly string[]): string {
  const close = closest(name, known);
  if (close) return `unknown field (did you mean '${close}'?)`;
  // A body of no fields (a trigger's pause or resume) has none to list: "(known: )" said nothing.
  return known.length > 0 ? `unknown field (known: ${known.join(', ')})` : 'unknown field (this body takes no fields)';
}

const JSON_SCHEMA_CONFIG: ConversionConfig = {
  errorMode: 'ignore',
  target: 'openapi-3.0',
  // A record that keeps every key is documented as the v.record it validates like.
  overrideSchema: ({ valibotSchema }) => {
    const plain = plainRecordOf(valibotSchema);
    return plain ? toJsonSchema(plain, JSON_SCHEMA_CONFIG) : undefined;
  },
};

// JSON Schema objects handed to fastify (and so to the OpenAPI document) map back to the
// valibot schema that really validates: one source, so docs and validation cannot drift.
const registry = new WeakMap<object, AnySchema>();

/** The JSON Schema of a valibot schema, remembered so that `valibotCompiler` validates with valibot. */
export function jsonSchema(schema: AnySchema): Record<string, unknown> {
  const json = toJsonSchema(schema, JSON_SCHEMA_CONFIG) as Record<string, unknown>;
  delete json.$schema;
  registry.set(json, schema);
  return json;
}

/** The valibot schema a JSON Schema made by `jsonSchema` stands for; undefined for any other object. */
export function valibotSchemaOf(json: object): AnySchema | undefined {
  return registry.get(json);
}

/**
 * Whether an issue is an object's required field that is missing: valibot's words for it
 * ('Invalid key: Expected "path" but received undefined') name no rule and read as a wrong key.
 */
const missingField = (i: v.BaseIssue<unknown>): boolean =>
  i.kind === 'schema' && /object$/.test(i.type) && i.received === 'undefined' && i.input === undefined && Boolean(i.path?.length);

/**
 * Where a field is, as a request's problems name it: `events[0].step`, an item by its index as a
 * playbook's problems name it (valibot's dot path said `events.0.step`); a key as it is written,
 * `renew_config.headers.X-Api-Key`.
 */
function fieldPath(keys: readonly unknown[]): string {
  return keys.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}

/** Issues as `path: message` strings, for error details (`events[0].step: …`; a missing required field: `path: is required`). */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string[] {
  return issues.map((i) => {
    const path = i.path?.length ? fieldPath(i.path.map((item) => item.key)) : undefined;
    const message = missingField(i) ? 'is required' : plainType(i);
    return path ? `${path}: ${message}` : message;
  });
}

/**
 * An issue's message, valibot's default for a value of the wrong type ('Invalid type: Expected
 * boolean but received "yes"') in our words ('must be boolean, got "yes"'), and its default for
 * a text or list of the wrong length ('Invalid length: Expected <=1000 but received 1001') too
 * ('must be at most 1000 characters, got 1001'); any other as it is.
 */
function plainType(i: v.BaseIssue<unknown>): string {
  if (i.kind === 'validation' && i.message.startsWith('Invalid length:')) return plainLength(i);
  if (i.kind !== 'schema' || !i.message.startsWith('Invalid type:')) return i.message;
  const expected = i.expected ?? '';
  // A picklist's or a union's literals: ("a" | "b") is one of them.
  return expected.startsWith('(') && expected.includes(' | ') ? `must be one of ${expected.slice(1, -1)}, got ${i.received}` : `must be ${expected}, got ${i.received}`;
}

/** A length rule's default message in our words: what the text (characters) or list (items) must be, and what came. */
function plainLength(i: v.BaseIssue<unknown>): string {
  const unit = typeof i.input === 'string' ? 'characters' : Array.isArray(i.input) ? 'items' : undefined;
  const requirement = (i as { requirement?: unknown }).requirement;
  if (!unit || (i.type !== 'non_empty' && typeof requirement !== 'number')) return i.message;
  if (i.type === 'non_empty' || (i.type === 'min_length' && requirement === 1)) return 'must not be empty';
  const bound = i.type === 'max_length' ? 'at most' : i.type === 'min_length' ? 'at least' : i.type === 'length' ? 'exactly' : undefined;
  return bound ? `must be ${bound} ${String(requirement)} ${unit}, got ${i.received}` : i.message;
}

/** fastify validatorCompiler: valibot for schemas made by `jsonSchema`, pass-through for others. */
export function valibotCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  const vs = valibotSchemaOf(schema);
  const shape = vs ? shapeOf(schema) : null;
  return (data: unknown) => {
    if (!vs) return { value: data };
    const part = httpPart ?? 'request';
    // valibot's object() and record() take an array as an object (`[]` was a body `{}`, `["mid"]`
    // too): an array where the schema wants an object is refused first, naming where it is.
    const arrays: string[] = httpPart === 'querystring' ? repeatedParameters(schema, data) : [];
    if (shape) arraysForObjects(shape, data, part, arrays);
    if (arrays.length) return { error: new ServiceError('unprocessable', { message: `invalid ${part}`, errors: arrays }) };
    // fastify hands a request without a body to the validator as null: null is "no body" (an
    // optional body passes), so a JSON null body is refused as a missing one. A missing
    // querystring or params object is an empty one.
    const result = v.safeParse(vs, data ?? (httpPart === 'body' ? undefined : {}));
    if (result.success) return { value: result.output };
    // The part itself is not an object (no body, a string): named as the part, in our words
    // (valibot's 'Invalid type: Expected Object but received undefined' names no fix).
    // A route's own message for it (PUT /api/limits: 'must be a JSON object') stands.
    const described = result.issues.map((i) =>
      !i.path?.length && i.kind === 'schema' && /object$/.test(i.type) ? `${part}: ${i.message.startsWith('Invalid type:') ? notAnObject(i.input) : i.message}` : describeIssues([i])[0],
    );
    // Two rules of one field may fail with the same words (a catalog path's pattern and its
    // segment check, both for `a//b`): the field is named once for each thing wrong with it.
    const errors = [...new Set(described)];
    return { error: new ServiceError('unprocessable', { message: `invalid ${part}`, errors }) };
  };
}

/** What a request part that should be a JSON object is instead, as its problem says it. */
function notAnObject(input: unknown): string {
  if (input === undefined) return 'is required: send a JSON object (Content-Type: application/json)';
  return `must be a JSON object, got ${Array.isArray(input) ? 'an array' : typeof input}`;
}

/** Whether a JSON Schema takes a list (`type: array`, or one in its anyOf/oneOf): a query parameter that may be repeated. */
function takesList(json: unknown): boolean {
  if (!isObject(json)) return false;
  if (json.type === 'array') return true;
  return [json.anyOf, json.oneOf].some((options) => Array.isArray(options) && options.some(takesList));
}

/**
 * `<name>: sent 3 times: send one value` for each parameter of `query` that came more than once
 * (the query parser makes it a list) where its schema takes one value. Otherwise the list met
 * the value's rule, which blamed the values: `status: must be one of …` for two that are, or
 * valibot's `Expected string but received Array` for a list the client never sent. A parameter
 * the schema does not name is left to it (refused as unknown).
 */
function repeatedParameters(json: object, query: unknown): string[] {
  const properties = 'properties' in json && isObject(json.properties) ? json.properties : {};
  if (!isObject(query)) return [];
  return Object.entries(query)
    .filter(([name, value]) => Array.isArray(value) && Object.hasOwn(properties, name) && !takesList(properties[name]))
    .map(([name, value]) => `${name}: sent ${Array.isArray(value) ? value.length : 1} times: send one value`);
}

/** Where a JSON Schema wants an object, and the parts inside that do: what arraysForObjects walks. */
type Shape = { object: boolean; properties: Map<string, Shape | null>; rest: Shape | null; items: Shape | null };

/** The shape of a JSON Schema made by `jsonSchema`; null where it wants no object at any depth (or says so only in a union). */
function shapeOf(json: unknown): Shape | null {
  if (!isObject(json)) return null;
  const properties = new Map<string, Shape | null>();
  if (isObject(json.properties)) for (const [key, p] of Object.entries(json.properties)) properties.set(key, shapeOf(p));
  const shape: Shape = { object: json.type === 'object', properties, rest: shapeOf(json.additionalProperties), items: json.type === 'array' ? shapeOf(json.items) : null };
  return shape.object || shape.rest || shape.items || [...properties.values()].some(Boolean) ? shape : null;
}

/**
 * Adds `<path>: must be a JSON object, not an array` to `out` for each array in `data` where
 * `shape` wants an object: the part (`body`) at the top, else where it is (`events[1].context`,
 * as fieldPath names places).
 */
function arraysForObjects(shape: Shape, data: unknown, part: string, out: string[], keys: readonly (string | number)[] = []): void {
  if (Array.isArray(data)) {
    if (shape.object) out.push(`${keys.length ? fieldPath(keys) : part}: must be a JSON object, not an array`);
    else if (shape.items) data.forEach((item, i) => arraysForObjects(shape.items!, item, part, out, [...keys, i]));
    return;
  }
  if (!isObject(data)) return;
  for (const [key, value] of Object.entries(data)) {
    const inner = shape.properties.has(key) ? shape.properties.get(key) : shape.rest;
    if (inner) arraysForObjects(inner, value, part, out, [...keys, key]);
  }
}

/**
 * fastify serializerCompiler: every answer is JSON.stringify'd, whatever its route's response
 * schema. Those schemas document the answers (OpenAPI); fastify's default would serialize through
 * them (fast-json-stringify), dropping a field they do not list and coercing one they type
 * otherwise, so a gap in the document would change what clients get.
 */
export function answerSerializer(): (data: unknown) => string {
  return (data) => JSON.stringify(data);
}
