// Path and query parameters that stand for integers (integerText in validation.ts: digits turned
// into a number, then bounded) as the OpenAPI document shows them. Generated from the valibot
// schema, such a parameter reads `{type: string, pattern: ^-?\d+$}`: its bounds, which come after
// the conversion, are lost, and a default reads as text ("50"). The document says what the route
// takes instead: an integer, its minimum and maximum, its default as a number.
import { isObject } from '../objects.ts';
import { valibotSchemaOf } from './validation.ts';

/** An operation's extension (@fastify/swagger copies a route schema's x- keys to its operation). */
export const INTEGER_PARAMETERS = 'x-integer-parameters';

type IntegerSchema = { type: 'integer'; minimum?: number; maximum?: number; default?: number };
const INTEGER_TEXT = /^-?\d+$/;

/** The integer schema `schema` (a valibot schema) stands for when it is an integerText, optional or described; else undefined. */
function integerSchemaOf(schema: unknown): IntegerSchema | undefined {
  if (!isObject(schema)) return undefined;
  if (schema.type === 'optional') {
    const inner = integerSchemaOf(schema.wrapped);
    const fallback = schema.default;
    return inner && typeof fallback === 'string' && INTEGER_TEXT.test(fallback) ? { ...inner, default: Number(fallback) } : inner;
  }
  if (!Array.isArray(schema.pipe)) return undefined;
  const [first, ...actions] = schema.pipe;
  // integerText with a description piped after it: the inner pipe decides.
  if (isObject(first) && Array.isArray(first.pipe)) return integerSchemaOf(first);
  const at = (type: string) => actions.findIndex((a) => isObject(a) && a.type === type);
  const regex = actions[at('regex')];
  const converted = at('transform');
  if (schema.type !== 'string' || !isObject(regex) || !(regex.requirement instanceof RegExp) || regex.requirement.source !== INTEGER_TEXT.source || converted < 0) return undefined;
  const out: IntegerSchema = { type: 'integer' };
  for (const a of actions.slice(converted + 1)) {
    if (!isObject(a) || typeof a.requirement !== 'number') continue;
    if (a.type === 'min_value') out.minimum = a.requirement;
    if (a.type === 'max_value') out.maximum = a.requirement;
  }
  return out;
}

/**
 * The integer parameters of a route's `params` and `querystring` (JSON Schemas made by jsonSchema),
 * keyed `path <name>` / `query <name>` as the document's parameters are placed; undefined when none.
 */
export function integerParametersOf(schema: { params?: unknown; querystring?: unknown } | undefined): Record<string, IntegerSchema> | undefined {
  const out: Record<string, IntegerSchema> = {};
  for (const [where, json] of [['path', schema?.params], ['query', schema?.querystring]] as const) {
    const object = isObject(json) ? valibotSchemaOf(json) : undefined;
    const entries = isObject(object) && 'entries' in object && isObject(object.entries) ? object.entries : {};
    for (const [name, entry] of Object.entries(entries)) {
      const integer = integerSchemaOf(entry);
      if (integer) out[`${where} ${name}`] = integer;
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Gives each operation's integer parameters (marked by INTEGER_PARAMETERS) their integer schema,
 * and removes the mark. Changes `operation` in place.
 */
export function typeIntegerParameters(operation: Record<string, unknown>): void {
  const marked = operation[INTEGER_PARAMETERS];
  delete operation[INTEGER_PARAMETERS];
  if (!isObject(marked) || !Array.isArray(operation.parameters)) return;
  for (const p of operation.parameters) {
    const integer = isObject(p) ? marked[`${String(p.in)} ${String(p.name)}`] : undefined;
    if (isObject(p) && isObject(integer)) p.schema = integer;
  }
}
