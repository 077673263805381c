// The request validator (src/api/validation.ts): valibot's object() and record() take an array as
// an object, so an array where a route's schema wants an object is refused before valibot is
// asked, naming where it is (the body itself, or a field at any depth the schema declares).
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/errors.ts';
import { jsonSchema, valibotCompiler } from '../../../src/api/validation.ts';

const errorsOf = (schema: v.GenericSchema, data: unknown, httpPart = 'body') => {
  const out = valibotCompiler({ schema: jsonSchema(schema), httpPart })(data) as { value?: unknown; error?: ServiceError };
  return out.error ? (out.error.detail as { errors: string[] }).errors : out.value;
};

describe('an array where an object is wanted', () => {
  const optionalBody = v.optional(v.object({ from_step: v.optional(v.string()) }), {});

  it('is refused as the body, as a field, as a record value and in a list; nothing else changes', () => {
    expect(errorsOf(optionalBody, [])).toEqual(['body: must be a JSON object, not an array']);
    expect(errorsOf(optionalBody, ['mid'])).toEqual(['body: must be a JSON object, not an array']);
    expect(errorsOf(optionalBody, null)).toEqual({});
    expect(errorsOf(optionalBody, { from_step: 'mid' })).toEqual({ from_step: 'mid' });
    const nested = v.object({
      labels: v.optional(v.record(v.string(), v.string())),
      rate: v.optional(v.object({ limit: v.optional(v.number()) })),
      events: v.optional(v.array(v.object({ context: v.optional(v.record(v.string(), v.unknown())) }))),
      payload: v.optional(v.unknown()),
    });
    expect(errorsOf(nested, { labels: ['a'], rate: [], events: [{ context: {} }, { context: [1] }] })).toEqual([
      'labels: must be a JSON object, not an array',
      'rate: must be a JSON object, not an array',
      'events[1].context: must be a JSON object, not an array',
    ]);
    // What the schema does not want an object for takes an array as before.
    expect(errorsOf(nested, { payload: [1], events: [] })).toEqual({ payload: [1], events: [] });
    expect(errorsOf(v.union([v.object({ a: v.string() }), v.array(v.string())]), ['x'])).toEqual(['x']);
  });
});
