// The spec's optional request fields sent as JSON null, as clients built from optional models
// send them: a credential's `tags` (its `description`, `schema` and `meta` already took null) and
// POST /api/postgres/execute's `schema` and `credential_name` mean none, as if omitted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('a credential with tags: null', () => {
  it('is created without tags, and a PUT or PATCH with tags: null clears them, as description: null does', async () => {
    const created = await http(t.url, 'POST', '/api/credentials', { name: 'null_tags', type: 'bearer', data: { token: 't' }, description: null, tags: null, schema: null });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.tags).toEqual([]);
    expect((await http(t.url, 'PATCH', '/api/credentials/null_tags', { tags: ['a'], description: 'd' })).body.tags).toEqual(['a']);
    const patched = await http(t.url, 'PATCH', '/api/credentials/null_tags', { tags: null, description: null });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ tags: [], description: null });
    expect((await http(t.url, 'PATCH', '/api/credentials/null_tags', { tags: ['b'] })).body.tags).toEqual(['b']);
    const put = await http(t.url, 'PUT', '/api/credentials/null_tags', { data: { token: 'u' }, tags: null });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.tags).toEqual([]);
  });

  it('still refuses tags that are no array', async () => {
    const res = await http(t.url, 'POST', '/api/credentials', { name: 'bad_tags', type: 'bearer', data: { token: 't' }, tags: 'a' });
    expect(res.status).toBe(422);
  });
});

describe('POST /api/postgres/execute with schema: null and credential_name: null', () => {
  it('runs on the service database as if neither were sent', async () => {
    const res = await http(t.url, 'POST', '/api/postgres/execute', { query: 'SELECT 1 AS one', schema: null, credential_name: null });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ status: 'ok', result: [{ one: 1 }] });
  });
});
