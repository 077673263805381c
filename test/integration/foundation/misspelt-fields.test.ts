// A misspelt field of a body whose fields change what happens is refused, naming it, and nothing
// changes: dropped, it silently meant the default (a cleanup's `dryrun` cancelled for real, a
// query's `credential` ran as the service's own reader, a keychain entry's `ttl_second` kept a
// day, a credential's `shema` stored it unchecked).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const refused = (res: { status: number; body: { detail?: { errors?: string[] } } }, field: string, suggestion: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail?.errors).toEqual([expect.stringMatching(new RegExp(`^${field}: unknown field \\((did you mean '${suggestion}'\\?|known: .*\\b${suggestion}\\b.*)\\)$`))]);
};

describe('misspelt fields', () => {
  it("a cleanup's dryrun is refused, and nothing is cancelled", async () => {
    const playbook = 'apiVersion: svc/v1\nmetadata: { name: w, path: t/waiter }\nworkflow:\n  - step: start\n    wait: { for: 1h }\n';
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook })).status).toBe(201);
    const started = await http(t.url, 'POST', '/api/run/playbook', { path: 't/waiter' });
    await t.deps.db.query(`UPDATE core.execution SET started_at = now() - interval '2 hours' WHERE execution_id = $1`, [started.body.execution_id]);
    refused(await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 1, dryrun: true }), 'dryrun', 'dry_run');
    expect((await http(t.url, 'GET', `/api/executions/${started.body.execution_id}`)).body.status).toBe('running');
    const dry = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 1, dry_run: true });
    expect(dry.body.execution_ids).toEqual([started.body.execution_id]);
  });

  it("a query's credential is refused, not run as the service's reader", async () => {
    refused(await http(t.url, 'POST', '/api/postgres/execute', { query: 'select 1 AS one', credential: 'pg_auth' }), 'credential', 'credential_name');
    expect((await http(t.url, 'POST', '/api/postgres/execute', { query: 'select 1 AS one' })).body).toEqual({ status: 'ok', result: [{ one: 1 }] });
  });

  it("a keychain entry's ttl_second is refused and nothing is stored", async () => {
    const catalog = await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: k, path: t/kc }\nworkflow:\n  - step: start\n' });
    const id = catalog.body.catalog_id;
    refused(await http(t.url, 'POST', `/api/keychain/${id}/typo`, { token_data: { v: 'x' }, credential_type: 'bearer', ttl_second: 5 }), 'ttl_second', 'ttl_seconds');
    expect((await http(t.url, 'GET', `/api/keychain/${id}/typo`)).body.status).toBe('not_found');
  });

  it("a credential's shema is refused on create, replace and merge", async () => {
    refused(await http(t.url, 'POST', '/api/credentials', { name: 'typo_auth', type: 'custom', data: { x: 1 }, shema: { required: ['token'] } }), 'shema', 'schema');
    expect((await http(t.url, 'GET', '/api/credentials/typo_auth')).status).toBe(404);
    expect((await http(t.url, 'POST', '/api/credentials', { name: 'typo_auth', type: 'custom', data: { x: 1 } })).status).toBe(201);
    refused(await http(t.url, 'PUT', '/api/credentials/typo_auth', { data: { x: 2 }, shema: {} }), 'shema', 'schema');
    refused(await http(t.url, 'PATCH', '/api/credentials/typo_auth', { dta: { x: 3 } }), 'dta', 'data');
  });

  it("a credential schema's requird is refused (it required nothing), on create and update", async () => {
    const sent = await http(t.url, 'POST', '/api/credentials', { name: 'schema_typo_auth', type: 'custom', data: { x: 1 }, schema: { requird: ['token'], typs: {} } });
    expect(sent.status).toBe(400);
    expect(sent.body.detail).toEqual({
      code: 'validation_failed',
      message: 'Credential validation failed',
      errors: ["Invalid schema: requird: unknown field (did you mean 'required'?)", "Invalid schema: typs: unknown field (did you mean 'types'?)"],
    });
    expect((await http(t.url, 'GET', '/api/credentials/schema_typo_auth')).status).toBe(404);
    expect((await http(t.url, 'POST', '/api/credentials', { name: 'schema_typo_auth', type: 'custom', data: { x: 1 }, schema: { required: ['x'] } })).status).toBe(201);
    expect((await http(t.url, 'PATCH', '/api/credentials/schema_typo_auth', { schema: { fields: ['x'], required: ['x'], bogus: 1 } })).body.detail.errors).toEqual([
      'Invalid schema: bogus: unknown field (known: fields, required, types, description)',
    ]);
  });
});
