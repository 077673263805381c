import * as v from 'valibot';
import { isObject } from '../objects.ts';
import { actualTypeName, matchesType, SCHEMA_TYPE_NAMES } from '../crypto/validate-against-schema.ts';
import { ownKeysRecord, RESERVED_NAMES } from '../own-keys-record.ts';
import { didYouMean } from './unknown-field-message.ts';

// Shape of a playbook's `inputs:` block (DESIGN.md "Authoring"): what a start's workload must hold.
// Type names are the credential schema's. Pure (valibot only): the console imports it too.

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Other languages' names for the types (Python's, Go's, YAML's own): no edit distance finds them.
const TYPE_ALIASES: Record<string, (typeof SCHEMA_TYPE_NAMES)[number]> = { int: 'integer', str: 'string', bool: 'boolean', float: 'number', double: 'number', list: 'array', seq: 'array', dict: 'object', map: 'object' };

/** The one meant for a type name not known: `int` is integer, `boolen` boolean. */
function typeMeant(name: string): string {
  const alias = Object.hasOwn(TYPE_ALIASES, name.toLowerCase()) ? TYPE_ALIASES[name.toLowerCase()] : undefined;
  return alias ? ` (did you mean '${alias}'?)` : didYouMean(name, SCHEMA_TYPE_NAMES);
}

/** Why `value` is refused by an input's `enum`: the values it takes and the one given, with the one meant for a misspelt text. */
export function enumMessage(values: readonly unknown[], value: unknown): string {
  const texts = values.filter((e): e is string => typeof e === 'string');
  return `must be one of ${values.map((e) => JSON.stringify(e)).join(', ')}, got ${JSON.stringify(value)}${typeof value === 'string' ? didYouMean(value, texts) : ''}`;
}

/** One declared input: `{type, required?, default?, enum?, description?}`; its default and enum values are of its type. */
export const InputSchema = v.pipe(
  v.strictObject({
    // With the one meant for a misspelt type (`boolen`), as any field taking a few values says it.
    type: v.picklist(SCHEMA_TYPE_NAMES, (issue) => `must be one of ${SCHEMA_TYPE_NAMES.join(', ')}${typeof issue.input === 'string' ? typeMeant(issue.input) : ''}`),
    required: v.optional(v.boolean()),
    default: v.optional(v.unknown()),
    enum: v.optional(v.pipe(v.array(v.unknown()), v.minLength(1, 'must list at least one value'))),
    description: v.optional(v.string()),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const input = dataset.value;
    const field = (key: string, value: unknown): v.ObjectPathItem => ({ type: 'object', origin: 'value', input, key, value });
    const values = input.enum ?? [];
    values.forEach((value, index) => {
      if (!matchesType(value, input.type)) {
        const item: v.ArrayPathItem = { type: 'array', origin: 'value', input: values, key: index, value };
        addIssue({ message: `must be ${input.type}, got ${actualTypeName(value)}`, path: [field('enum', values), item] });
      }
    });
    if (input.default === undefined) return;
    if (!matchesType(input.default, input.type)) addIssue({ message: `must be ${input.type}, got ${actualTypeName(input.default)}`, path: [field('default', input.default)] });
    else if (input.enum && !input.enum.some((value) => sameValue(value, input.default))) addIssue({ message: enumMessage(input.enum, input.default), path: [field('default', input.default)] });
  }),
);

/** The `inputs:` block: input names are identifiers (templates read them as `workload.<name>`). */
export const InputsSchema = v.pipe(
  // valibot's record would drop these names without a word (a typed record keeps its issues for the messages above).
  v.custom((input) => !isObject(input) || !RESERVED_NAMES.some((name) => Object.hasOwn(input, name)), `the input names ${RESERVED_NAMES.join(', ')} are reserved (JavaScript gives them a meaning of their own)`),
  // Not v.record: it takes a list for a mapping keyed "0", "1", ... (an empty one for no inputs).
  ownKeysRecord(v.pipe(v.string(), v.regex(identifier, 'must be an identifier (letters, digits, _)')), InputSchema),
  // As a `workload:` block's access_token (playbook.schema.ts): a default would be a token written into the playbook.
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const inputs = dataset.value;
    const token = inputs.access_token;
    if (token?.default === undefined) return;
    const item = (key: string, value: unknown, input: Record<string, unknown>): v.ObjectPathItem => ({ type: 'object', origin: 'value', input, key, value });
    addIssue({
      message: 'a token is not written into a playbook: pass it when starting (workload.access_token, sealed there) or name a credential in the task\'s auth',
      path: [item('access_token', token, inputs), item('default', token.default, token)],
    });
  }),
);

export type InputDeclaration = v.InferOutput<typeof InputSchema>;
export type Inputs = v.InferOutput<typeof InputsSchema>;

/** Equality of JSON values (enum membership): same type and same content, key order aside. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameValue(a[k], b[k]));
}
