// A nullable field with a fixed set of values is documented with `null` among them: in OpenAPI
// 3.0.3 `nullable: true` does not widen an `enum`, so a document without it says the null the
// route answers is not a value (GET /api/credential-types: `test` is null for the types without
// a connection test).
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** Where in `node` a nullable schema's enum leaves null out. */
function nullableEnumsWithoutNull(node: unknown, at = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => nullableEnumsWithoutNull(item, `${at}/${i}`));
  if (typeof node !== 'object' || node === null) return [];
  const here = Object.entries(node).flatMap(([k, value]) => nullableEnumsWithoutNull(value, `${at}/${k}`));
  const record: Record<string, unknown> = Object.fromEntries(Object.entries(node));
  return record.nullable === true && Array.isArray(record.enum) && !record.enum.includes(null) ? [at, ...here] : here;
}

it('lists null in the enum of every nullable schema, as the answers hold it', async () => {
  const doc = v.parse(v.object({ paths: v.record(v.string(), v.unknown()) }), t.app.swagger());
  expect(nullableEnumsWithoutNull(doc.paths)).toEqual([]);
  // The case that showed it: a real answer's values are each among the documented ones.
  const Test = v.object({ enum: v.array(v.nullable(v.string())), nullable: v.literal(true) });
  const Doc = v.object({
    paths: v.object({
      '/api/credential-types': v.object({
        get: v.object({ responses: v.object({ '200': v.object({ content: v.object({ 'application/json': v.object({ schema: v.object({ properties: v.object({ types: v.object({ items: v.object({ properties: v.object({ test: Test }) }) }) }) }) }) }) }) }) }),
      }),
    }),
  });
  const documented = v.parse(Doc, doc).paths['/api/credential-types'].get.responses['200'].content['application/json'].schema.properties.types.items.properties.test.enum;
  const answered = v.parse(v.object({ types: v.array(v.object({ test: v.nullable(v.string()) })) }), (await t.app.inject({ method: 'GET', url: '/api/credential-types' })).json());
  const tests = new Set(answered.types.map((type) => type.test));
  expect(tests.has(null)).toBe(true);
  for (const value of tests) expect(documented).toContain(value);
});
