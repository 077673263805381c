// Every operation of the OpenAPI document has an operationId, unique and camelCase: a client
// generated from it (openapi-generator, orval) names its methods so. None of the 62 had one, and
// each generator made up names of its own (apiExecutionsIdCancelPost, postApiExecutionsIdCancel).
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { nameOperations } from '../../../src/api/operation-ids.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const Document = v.object({ paths: v.record(v.string(), v.record(v.string(), v.unknown())) });
const Operation = v.looseObject({ operationId: v.optional(v.string()) });
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

it('every operation has a unique camelCase operationId, read from its method and path', async () => {
  const res = await http(t.url, 'GET', '/docs/json');
  expect(res.status).toBe(200);
  const ids = new Map<string, string>();
  const without: string[] = [];
  for (const [path, operations] of Object.entries(v.parse(Document, res.body).paths)) {
    for (const [method, operation] of Object.entries(operations).filter(([m]) => METHODS.includes(m))) {
      const id = v.parse(Operation, operation).operationId;
      if (id === undefined) without.push(`${method.toUpperCase()} ${path}`);
      else ids.set(`${method.toUpperCase()} ${path}`, id);
    }
  }
  expect(without).toEqual([]);
  expect(ids.size).toBeGreaterThan(60);
  expect(new Set(ids.values()).size).toBe(ids.size);
  for (const id of ids.values()) expect(id).toMatch(/^[a-z]+(?:[A-Z][a-z0-9]*)+$/);
  // Stable: a client's method names are these as long as the routes are.
  expect(Object.fromEntries(['GET /api/executions/{execution_id}', 'POST /api/executions/{id}/cancel', 'GET /api/keychain/{catalog_id}/{keychain_name}', 'GET /api/health', 'GET /health'].map((k) => [k, ids.get(k)]))).toEqual({
    'GET /api/executions/{execution_id}': 'getExecutionsByExecutionId',
    'POST /api/executions/{id}/cancel': 'postExecutionsByIdCancel',
    'GET /api/keychain/{catalog_id}/{keychain_name}': 'getKeychainByCatalogIdAndKeychainName',
    'GET /api/health': 'getHealth',
    'GET /health': 'getServerHealth',
  });
});

it('two operations that would share one are refused, naming both', () => {
  expect(() => nameOperations({ '/health': { get: {} }, '/api/health': { get: {} } })).toThrow('operationId getHealth of GET /api/health is also GET /health');
});
