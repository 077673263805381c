// A keychain entry's schema with a field the format does not have (`requird`, `typs`) was stored
// (201) and checked nothing, then and at every renewal (the renewer stores the schema it read
// again). It is refused as a credential's is: 400 validation_failed naming the field with "did you
// mean", nothing stored or replaced. An entry stored before the check keeps renewing: its own
// schema sent back as it is stored is taken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let catalogId = 0;
beforeAll(async () => {
  t = await startTestApp();
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: k, path: audit/schema-fields }\nworkflow:\n  - step: start\n' });
  expect(reg.status).toBe(201);
  catalogId = reg.body.catalog_id;
});
afterAll(async () => t?.close());

const store = (name: string, body: Record<string, unknown>) => http(t.url, 'POST', `/api/keychain/${catalogId}/${name}`, { credential_type: 'bearer', ...body });
const read = (name: string) => http(t.url, 'GET', `/api/keychain/${catalogId}/${name}`);

describe("a keychain entry's schema", () => {
  it('refuses a misspelt field naming it (did you mean), and stores nothing', async () => {
    const res = await store('typo', { token_data: { token: 'kc-schema-secret' }, schema: { requird: ['token'], typs: { token: 'string' }, bogus: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const errors = [
      "Invalid schema: requird: unknown field (did you mean 'required'?)",
      "Invalid schema: typs: unknown field (did you mean 'types'?)",
      'Invalid schema: bogus: unknown field (known: fields, required, types, description)',
    ];
    expect(res.body.detail).toEqual({ code: 'validation_failed', message: 'Credential validation failed', errors, error: `Token validation failed: ${errors.join('; ')}` });
    expect(JSON.stringify(res.body)).not.toContain('kc-schema-secret');
    expect((await read('typo')).body.status).toBe('not_found');
  });

  it('names it beside the data errors of the fields it does know', async () => {
    const res = await store('typo_and_missing', { token_data: { other: 1 }, schema: { required: ['token'], feilds: ['token'] } });
    expect(res.status).toBe(400);
    expect(res.body.detail.errors).toEqual(["Invalid schema: feilds: unknown field (did you mean 'fields'?)", 'Missing required field: token']);
  });

  it('leaves a stored entry as it was when its replacement has one', async () => {
    const schema = { required: ['token'], types: { token: 'string' } };
    expect((await store('kept', { token_data: { token: 'first' }, schema, ttl_seconds: 600 })).status).toBe(201);
    const before = (await read('kept')).body;
    const res = await store('kept', { token_data: { tokn: 'second' }, schema: { requried: ['token'] }, ttl_seconds: 60 });
    expect(res.status).toBe(400);
    expect(res.body.detail.errors).toEqual(["Invalid schema: requried: unknown field (did you mean 'required'?)"]);
    const after = (await read('kept')).body;
    expect(after).toMatchObject({ status: 'success', token_data: { token: 'first' }, schema, expires_at: before.expires_at });
  });

  it('takes the schema an entry stored before the check has, sent back as it is stored (a renewal), and no other', async () => {
    expect((await store('legacy', { token_data: { token: 'old' }, schema: { required: ['token'] } })).status).toBe(201);
    // What a store before this check left: a misspelt field in the stored schema.
    const legacy = { requird: ['token'], types: { token: 'string' } };
    await t.deps.db.query(`UPDATE core.keychain SET schema = $1 WHERE cache_key = $2`, [JSON.stringify(legacy), `legacy:${catalogId}:global`]);
    // Sent with its keys in another order: the same schema.
    const renewed = await store('legacy', { token_data: { token: 'new' }, schema: { types: { token: 'string' }, requird: ['token'] }, ttl_seconds: 600 });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    expect((await read('legacy')).body).toMatchObject({ status: 'success', token_data: { token: 'new' }, schema: legacy });
    const changed = await store('legacy', { token_data: { token: 'newer' }, schema: { requird: ['token', 'extra'] } });
    expect(changed.status).toBe(400);
    expect(changed.body.detail.errors).toEqual(["Invalid schema: requird: unknown field (did you mean 'required'?)"]);
    expect((await read('legacy')).body.token_data).toEqual({ token: 'new' });
  });
});
