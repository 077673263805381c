import * as v from 'valibot';
import { isObject } from '../objects.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

/** Type names a credential/keychain schema may use in `types`. */
export const SCHEMA_TYPE_NAMES = ['string', 'integer', 'boolean', 'number', 'array', 'object'] as const;
export type SchemaTypeName = (typeof SCHEMA_TYPE_NAMES)[number];

/**
 * Valibot schema of the schema object itself, so a malformed one is refused (400) on store.
 * Kept a plain object() so it converts to JSON Schema for OpenAPI (type: object there refuses
 * arrays; valibot's object() alone lets an array through, validateAgainstSchema refuses it).
 */
export const credentialSchemaSchema = v.object({
  fields: v.optional(v.array(v.string())),
  required: v.optional(v.array(v.string())),
  types: v.optional(ownKeysRecord(v.string(), v.picklist(SCHEMA_TYPE_NAMES))),
  description: v.optional(v.string()),
});

/**
 * Name of a value's type in the schema vocabulary: an integral number is `integer`, any other
 * number `number`; `null` for null; JavaScript's `typeof` for anything JSON cannot hold.
 */
export function actualTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Whether `value` is of `type` in the schema vocabulary (credential schemas and playbook `inputs:`). */
export function matchesType(value: unknown, type: SchemaTypeName): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
  }
}

/**
 * Checks `data` against a credential/keychain schema and returns the spec's error strings
 * (empty when valid or when `schema` is null/undefined). A malformed schema yields one
 * `Invalid schema: ...` error rather than a silent pass.
 */
export function validateAgainstSchema(data: Record<string, unknown>, schema: unknown): string[] {
  if (schema === null || schema === undefined) return [];
  if (Array.isArray(schema)) return ['Invalid schema: schema must be a JSON object'];
  const parsed = v.safeParse(credentialSchemaSchema, schema);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = v.getDotPath(issue);
    return [`Invalid schema: ${path === null ? '' : `${path}: `}${issue.message}`];
  }
  const { fields = [], required = [], types = {} } = parsed.output;
  const errors: string[] = [];

  for (const field of required) {
    if (!Object.hasOwn(data, field)) errors.push(`Missing required field: ${field}`);
  }
  for (const [field, type] of Object.entries(types)) {
    if (!Object.hasOwn(data, field)) continue;
    const value = data[field];
    if (!matchesType(value, type)) errors.push(`Field '${field}' must be ${type}, got ${actualTypeName(value)}`);
  }
  if (fields.length > 0) {
    const allowed = new Set(fields);
    const unexpected = Object.keys(data).filter((key) => !allowed.has(key));
    if (unexpected.length > 0) errors.push(`Unexpected fields: ${unexpected.join(', ')}`);
  }
  return errors;
}
