import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { ServiceError } from '../errors.ts';

type AnySchema = v.GenericSchema;

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

/** Issues as `path: message` strings, for error details. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string[] {
  return issues.map((i) => {
    const path = v.getDotPath(i);
    return path ? `${path}: ${i.message}` : i.message;
  });
}

/** Validates input with a valibot schema or throws 422 listing every problem. */
export function parseOr422<S extends AnySchema>(schema: S, input: unknown, what = 'request'): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw new ServiceError('unprocessable', { message: `invalid ${what}`, errors: describeIssues(result.issues) });
}

/** fastify validatorCompiler: valibot for schemas made by `jsonSchema`, pass-through for others. */
export function valibotCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  const vs = registry.get(schema);
  return (data: unknown) => {
    if (!vs) return { value: data };
    const result = v.safeParse(vs, data ?? (httpPart === 'body' ? undefined : {}));
    if (result.success) return { value: result.output };
    return {
      error: new ServiceError('unprocessable', { message: `invalid ${httpPart ?? 'request'}`, errors: describeIssues(result.issues) }),
    };
  };
}
