// The OpenAPI document served at /docs/json is a valid OpenAPI 3.0.3 document, as a client generator
// or a validator reads it. It was not: GET /api/credentials/{identifier} beside PUT, PATCH and
// DELETE /api/credentials/{name} (paths that differ only in a parameter's name are one path,
// which a document must not hold twice), `required: []` on the bodies whose fields are all
// optional (3.0.3 wants one or more), and two nullable unions whose `nullable` 3.0.3 ignores
// without a `type` (POST /api/keychain/...: execution_id, parent_execution_id take null).
import { createRequire } from 'node:module';
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

// The validator swagger2openapi (of redoc, which serves /redoc) brings: the OpenAPI 3.0 schema
// and the specification's rules beyond it (path templates, parameters).
const validator = v.parse(v.object({ validate: v.function() }), createRequire(import.meta.url)('oas-validator'));

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** Where in `node` a schema says `nullable: true` without a `type`, which OpenAPI 3.0.3 ignores. */
function untypedNullables(node: unknown, at = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => untypedNullables(item, `${at}/${i}`));
  if (typeof node !== 'object' || node === null) return [];
  const record: Record<string, unknown> = Object.fromEntries(Object.entries(node));
  const here = Object.entries(record).flatMap(([k, value]) => untypedNullables(value, `${at}/${k}`));
  return record.nullable === true && record.type === undefined ? [at, ...here] : here;
}

it('validates as OpenAPI 3.0.3, every nullable schema typed', async () => {
  const res = await http(t.url, 'GET', '/docs/json');
  expect(res.status).toBe(200);
  const doc = v.parse(v.looseObject({ openapi: v.literal('3.0.3'), paths: v.record(v.string(), v.unknown()) }), res.body);
  const problem = await Promise.resolve(validator.validate(doc, { resolve: false, laxDefaults: false })).then(
    () => null,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  expect(problem).toBeNull();
  expect(untypedNullables(doc.paths)).toEqual([]);
  // The credential's routes are one path; each takes a name or an id.
  const credential = v.parse(v.record(v.string(), v.object({ parameters: v.array(v.looseObject({ name: v.string(), in: v.string(), description: v.optional(v.string()) })) })), doc.paths['/api/credentials/{name}']);
  expect(Object.keys(credential).sort()).toEqual(['delete', 'get', 'patch', 'put']);
  for (const op of Object.values(credential)) expect(op.parameters.find((p) => p.in === 'path')).toMatchObject({ name: 'name', description: expect.stringMatching(/name, or its id/) });
  expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/credentials/{identifier}'))).toEqual([]);
});

it('a route still takes an id where the document says {name}', async () => {
  const made = await http(t.url, 'POST', '/api/credentials', { name: 'valid_doc', type: 'bearer', data: { token: 't' } });
  expect(made.status).toBe(201);
  const byId = await http(t.url, 'GET', `/api/credentials/${v.parse(v.object({ id: v.string() }), made.body).id}`);
  expect(byId.body).toMatchObject({ name: 'valid_doc' });
});
