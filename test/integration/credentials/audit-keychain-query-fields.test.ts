// The keychain entry routes pick the entry by their query (scope_type, execution_id): a misspelt
// key was dropped, so the query meant the default scope, global: DELETE ?scope=local&execution_id=N
// deleted the playbook's global entry of that name and left the local one it meant. Another key
// is now refused naming it (as a body's misspelt field is), and nothing is read or deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let catalogId = 0;
let executionId = 0;
beforeAll(async () => {
  t = await startTestApp();
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: k, path: audit/kc-query }\nworkflow:\n  - step: start\n' });
  catalogId = reg.body.catalog_id;
  executionId = (await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/kc-query' })).body.execution_id;
});
afterAll(async () => t?.close());

const entry = (query = '') => `/api/keychain/${catalogId}/api${query}`;
const accessCount = async (key: string) => (await t.deps.db.query<{ n: number }>('SELECT access_count AS n FROM core.keychain WHERE cache_key = $1', [key])).rows[0]?.n;

describe('the keychain entry query', () => {
  it('refuses a misspelt key naming it, and deletes or reads nothing', async () => {
    expect((await http(t.url, 'POST', entry(), { token_data: { token: 'kc-global-value' }, credential_type: 'bearer' })).status).toBe(201);
    const local = { token_data: { token: 'kc-local-value' }, credential_type: 'bearer', scope_type: 'local', execution_id: executionId };
    expect((await http(t.url, 'POST', entry(), local)).status).toBe(201);

    const deleted = await http(t.url, 'DELETE', entry(`?scope=local&execution_id=${executionId}`));
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(422);
    expect(deleted.body.detail.errors).toEqual(['scope: unknown field (known: scope_type, execution_id)']);
    const read = await http(t.url, 'GET', entry(`?scopetype=local&execution_id=${executionId}`));
    expect(read.status, JSON.stringify(read.body)).toBe(422);
    expect(read.body.detail.errors).toEqual(["scopetype: unknown field (did you mean 'scope_type'?)"]);

    // Both entries are there, unread.
    expect(await accessCount(`api:${catalogId}:global`)).toBe(0);
    expect(await accessCount(`api:${catalogId}:${executionId}`)).toBe(0);
    // The keys as spelt still work.
    expect((await http(t.url, 'DELETE', entry(`?scope_type=local&execution_id=${executionId}`))).status).toBe(200);
    expect((await http(t.url, 'GET', entry())).body.status).toBe('success');
  });
});
