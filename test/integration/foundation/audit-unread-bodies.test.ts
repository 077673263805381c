// A body sent to a route that reads none was dropped, and the route did what it does without it:
// `DELETE /api/keychain/{catalog_id}/{name}` with `{"scope_type": "local"}` deleted the global
// entry, `POST /api/admin/command_reaper/sweep` with `{"dry_run": true}` swept for real. As a
// query parameter to a route that reads none is (audit-unknown-query-parameters), such a body is
// now refused, 422 naming what was sent, and nothing is done; no body, or `{}`, is taken as
// before (the doctor sends `{}` to the sweep). Found by the OpenAPI-driven bad-input fuzzer (helper).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let catalogId = 0;
beforeAll(async () => {
  t = await startTestApp();
  const content = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: b, path: t/b }\nworkflow:\n  - step: start\n';
  catalogId = (await http(t.url, 'POST', '/api/catalog/playbook', { content })).body.catalog_id;
});
afterAll(async () => t?.close());

const refused = (res: { status: number; body: { detail?: { errors?: string[] } } }, error: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail?.errors).toEqual([error]);
};

describe('a body sent to a route that reads none', () => {
  it('is refused naming what was sent, and nothing is deleted', async () => {
    expect((await http(t.url, 'POST', `/api/keychain/${catalogId}/k1`, { token_data: { a: 1 }, credential_type: 'bearer', cache_type: 'secret' })).status).toBe(201);
    expect((await http(t.url, 'PUT', '/api/limits/l1', { concurrency: 1 })).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/credentials', { name: 'c1', type: 'bearer', data: { token: 'x' } })).status).toBe(201);

    refused(await http(t.url, 'DELETE', `/api/keychain/${catalogId}/k1`, { scope_type: 'local' }), 'scope_type: unknown field (this route takes no body: send none, or {})');
    refused(await http(t.url, 'DELETE', '/api/limits/l1', '"keep"'), 'body: this route takes no body: send none, or {}');
    refused(await http(t.url, 'DELETE', '/api/credentials/c1', []), 'body: this route takes no body: send none, or {}');
    refused(await http(t.url, 'POST', '/api/admin/command_reaper/sweep', { dry_run: true }), 'dry_run: unknown field (this route takes no body: send none, or {})');

    expect((await http(t.url, 'GET', `/api/keychain/${catalogId}/k1`)).status).toBe(200);
    expect((await http(t.url, 'GET', '/api/limits/l1')).body.defined).toBe(true);
    expect((await http(t.url, 'GET', '/api/credentials/c1')).status).toBe(200);
  });

  it('no body, or {}, is taken as before', async () => {
    expect((await http(t.url, 'POST', `/api/keychain/${catalogId}/k2`, { token_data: { a: 1 }, credential_type: 'bearer', cache_type: 'secret' })).status).toBe(201);
    expect((await http(t.url, 'PUT', '/api/limits/l2', { concurrency: 1 })).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/admin/command_reaper/sweep', {})).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/admin/command_reaper/sweep')).status).toBe(200);
    expect((await http(t.url, 'DELETE', `/api/keychain/${catalogId}/k2`, {})).status).toBe(200);
    expect((await http(t.url, 'DELETE', '/api/limits/l2')).status).toBe(200);
  });
});
