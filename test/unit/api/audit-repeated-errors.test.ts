// A request field that breaks two rules giving the same words was named twice in detail.errors:
// POST /api/catalog/playbook {path: "a//b"} answered the catalog path's message twice (its pattern
// and its segment check both refuse an empty segment). The validator lists each error once.
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { catalogPath } from '../../../src/api/catalog-path.ts';
import { jsonSchema, valibotCompiler } from '../../../src/api/validation.ts';
import type { ServiceError } from '../../../src/errors.ts';

const errorsOf = (schema: v.GenericSchema, data: unknown): unknown => {
  const out = valibotCompiler({ schema: jsonSchema(schema), httpPart: 'body' })(data) as { value?: unknown; error?: ServiceError };
  return out.error ? (out.error.detail as { errors: string[] }).errors : out.value;
};

describe('detail.errors of an invalid body', () => {
  const body = v.object({ content: v.string(), path: v.optional(catalogPath) });

  it('names a field once for a message two of its rules give', () => {
    const errors = errorsOf(body, { content: 'x', path: 'a//b' });
    expect(errors).toEqual([expect.stringMatching(/^path: must be slash-separated names/)]);
  });

  it('keeps different messages, of one field and of several', () => {
    expect(errorsOf(body, { path: 'a/./b' })).toEqual(['content: is required', expect.stringMatching(/^path: must be slash-separated names/)]);
    expect(errorsOf(v.object({ n: v.pipe(v.number(), v.integer('must be whole'), v.minValue(1, 'must be >= 1')) }), { n: 0.5 })).toEqual(['n: must be whole', 'n: must be >= 1']);
  });
});
