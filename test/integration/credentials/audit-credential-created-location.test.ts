// POST /api/credentials creates at another URI than its own (the collection's): its 201 said
// where the credential now is nowhere, where every other 201 of the API that creates elsewhere
// (a catalog version, a retry) and the batch's 202 carry a Location (RFC 9110, 15.3.2). The 201
// now points at /api/credentials/{name}, which answers the credential; the document says so.
// An update (200) creates nothing and carries none.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

it('a created credential: 201 with Location /api/credentials/{name}, which answers it; an update: 200 without', async () => {
  const created = await http(t.url, 'POST', '/api/credentials', { name: 'located.api-auth_1', type: 'bearer', data: { token: 'one' } });
  expect(created.status).toBe(201);
  expect(created.headers.get('location')).toBe('/api/credentials/located.api-auth_1');
  const there = await http(t.url, 'GET', created.headers.get('location')!);
  expect(there.status).toBe(200);
  expect(there.body).toMatchObject({ id: created.body.id, name: 'located.api-auth_1' });

  const updated = await http(t.url, 'POST', '/api/credentials', { name: 'located.api-auth_1', type: 'bearer', data: { token: 'two' } });
  expect(updated.status).toBe(200);
  expect(updated.headers.get('location')).toBeNull();
});

it('the OpenAPI document names the header of the 201', async () => {
  const doc = (await http(t.url, 'GET', '/docs/json')).body;
  const responses = doc.paths['/api/credentials'].post.responses;
  expect(Object.keys(responses['201'].headers ?? {})).toContain('location');
  expect(responses['200'].headers?.location).toBeUndefined();
});
