import { jsonSchema } from '../../../src/api/validation.ts';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  actualTypeName,
  credentialSchemaSchema,
  validateAgainstSchema,
} from '../../../src/crypto/validate-against-schema.ts';

describe('validateAgainstSchema', () => {
  it('accepts anything when there is no schema', () => {
    expect(validateAgainstSchema({ anything: 1 }, null)).toEqual([]);
    expect(validateAgainstSchema({ anything: 1 }, undefined)).toEqual([]);
  });

  it('accepts an empty schema', () => {
    expect(validateAgainstSchema({ a: 1 }, {})).toEqual([]);
    expect(validateAgainstSchema({ a: 1 }, { fields: [], required: [], types: {}, description: 'x' })).toEqual([]);
  });

  it('reports each missing required field', () => {
    expect(validateAgainstSchema({ host: 'h' }, { required: ['host', 'user', 'password'] })).toEqual([
      'Missing required field: user',
      'Missing required field: password',
    ]);
  });

  it('counts a present null as present for required', () => {
    expect(validateAgainstSchema({ host: null }, { required: ['host'] })).toEqual([]);
  });

  it('checks each type name and reports the actual type', () => {
    const schema = {
      types: { s: 'string', i: 'integer', b: 'boolean', n: 'number', a: 'array', o: 'object' },
    };
    expect(validateAgainstSchema({ s: 'x', i: 3, b: false, n: 1.5, a: [], o: {} }, schema)).toEqual([]);
    expect(validateAgainstSchema({ s: 1, i: 'x', b: 'true', n: '1', a: {}, o: [] }, schema)).toEqual([
      "Field 's' must be string, got integer",
      "Field 'i' must be integer, got string",
      "Field 'b' must be boolean, got string",
      "Field 'n' must be number, got string",
      "Field 'a' must be array, got object",
      "Field 'o' must be object, got array",
    ]);
  });

  it('lets number accept integers and floats; integer rejects floats', () => {
    const schema = { types: { n: 'number', i: 'integer' } };
    expect(validateAgainstSchema({ n: 5, i: 5 }, schema)).toEqual([]);
    expect(validateAgainstSchema({ n: 5.25, i: 1.5 }, schema)).toEqual(["Field 'i' must be integer, got number"]);
  });

  it('reports null as null and checks only present fields', () => {
    const schema = { types: { o: 'object', s: 'string', absent: 'string' } };
    expect(validateAgainstSchema({ o: null, s: true }, schema)).toEqual([
      "Field 'o' must be object, got null",
      "Field 's' must be string, got boolean",
    ]);
  });

  it('lists unexpected fields in data order when fields is non-empty', () => {
    const schema = { fields: ['host', 'port'] };
    expect(validateAgainstSchema({ zeta: 1, host: 'h', alpha: 2, port: 1 }, schema)).toEqual([
      'Unexpected fields: zeta, alpha',
    ]);
    expect(validateAgainstSchema({ host: 'h' }, schema)).toEqual([]);
    expect(validateAgainstSchema({ whatever: 1 }, { fields: [] })).toEqual([]);
  });

  it('reports every rule together in order: required, types, unexpected', () => {
    const schema = {
      fields: ['host', 'port', 'user', 'password'],
      required: ['host', 'user', 'password'],
      types: { host: 'string', port: 'integer', password: 'string' },
      description: 'PostgreSQL connection',
    };
    expect(validateAgainstSchema({ host: 42, port: '5432', user: 'u', extra: 1, more: 2 }, schema)).toEqual([
      'Missing required field: password',
      "Field 'host' must be string, got integer",
      "Field 'port' must be integer, got string",
      'Unexpected fields: extra, more',
    ]);
  });

  it('does not treat inherited properties as present', () => {
    expect(validateAgainstSchema({}, { required: ['toString'] })).toEqual(['Missing required field: toString']);
  });

  it('refuses a malformed schema instead of passing silently', () => {
    expect(validateAgainstSchema({ a: 1 }, { types: { a: 'date' } })[0]).toMatch(/^Invalid schema: types\.a: /);
    expect(validateAgainstSchema({ a: 1 }, { required: 'a' })[0]).toMatch(/^Invalid schema: required: /);
    expect(validateAgainstSchema({ a: 1 }, 'nope')[0]).toMatch(/^Invalid schema: /);
    expect(validateAgainstSchema({ a: 1 }, [])).toEqual(['Invalid schema: schema must be a JSON object']);
  });
});

describe('actualTypeName', () => {
  it('uses the schema vocabulary', () => {
    expect([1, 1.5, 's', true, null, [], {}].map(actualTypeName)).toEqual([
      'integer',
      'number',
      'string',
      'boolean',
      'null',
      'array',
      'object',
    ]);
  });
});

describe('credentialSchemaSchema', () => {
  it('converts to JSON Schema for the OpenAPI document', () => {
    const json = jsonSchema(credentialSchemaSchema);
    expect(json.type).toBe('object');
  });

  it('accepts a well-formed schema', () => {
    const schema = { fields: ['a'], required: ['a'], types: { a: 'string' }, description: 'd' };
    expect(v.parse(credentialSchemaSchema, schema)).toEqual(schema);
    expect(v.is(credentialSchemaSchema, {})).toBe(true);
  });

  it('refuses wrong shapes and unknown type names', () => {
    for (const bad of [null, 'x', { fields: 'a' }, { required: [1] }, { types: { a: 'date' } }, { description: 3 }]) {
      expect(v.is(credentialSchemaSchema, bad)).toBe(false);
    }
  });
});
