import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { closest } from '../dsl/unknown-field-message.ts';
import { ServiceError } from '../errors.ts';

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
  return v.strictObject(entries, (issue) => (issue.expected === 'never' ? unknownFieldMessage(String(issue.input), known) : issue.message));
}

function unknownFieldMessage(name: string, known: readonly string[]): string {
  const close = closest(name, known);
  return close ? `unknown field (did you mean '${close}'?)` : `unknown field (known: ${known.join(', ')})`;
}

// JSON Schema objects handed to fastify (and so to the OpenAPI document) map back to the
// valibot schema that really validates: one source, so docs and validation cannot drift.
const registry = new WeakMap<object, AnySchema>();

/** The JSON Schema of a valibot schema, remembered so that `valibotCompiler` validates with valibot. */
export function jsonSchema(schema: AnySchema): Record<string, unknown> {
  const json = toJsonSchema(schema, { errorMode: 'ignore', target: 'openapi-3.0' }) as Record<string, unknown>;
  delete json.$schema;
  registry.set(json, schema);
  return json;
}

/** The valibot schema a JSON Schema made by `jsonSchema` stands for; undefined for any other object. */
export function valibotSchemaOf(json: object): AnySchema | undefined {
  return registry.get(json);
}

/** Issues as `path: message` strings, for error details. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string[] {
  return issues.map((i) => {
    const path = v.getDotPath(i);
    return path ? `${path}: ${i.message}` : i.message;
  });
}

/** fastify validatorCompiler: valibot for schemas made by `jsonSchema`, pass-through for others. */
export function valibotCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  const vs = valibotSchemaOf(schema);
  return (data: unknown) => {
    if (!vs) return { value: data };
    // fastify hands a request without a body to the validator as null: null is "no body" (an
    // optional body passes), so a JSON null body is refused as a missing one. A missing
    // querystring or params object is an empty one.
    const result = v.safeParse(vs, data ?? (httpPart === 'body' ? undefined : {}));
    if (result.success) return { value: result.output };
    return {
      error: new ServiceError('unprocessable', { message: `invalid ${httpPart ?? 'request'}`, errors: describeIssues(result.issues) }),
    };
  };
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
