import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_TYPE_SPECS } from '../../../src/credential/credential-types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const post = (body: unknown) => http(t.url, 'POST', '/api/credentials', body);
const get = (path: string) => http(t.url, 'GET', path);
const rowCount = async (name: string) =>
  (await t.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM core.credential WHERE name = $1', [name])).rows[0].n;

describe('POST /api/credentials', () => {
  it('creates (201) and returns metadata only, id as a string, ISO 8601 UTC timestamps', async () => {
    const res = await post({
      name: 'create_auth',
      type: 'bearer',
      description: 'API token',
      tags: ['api', 'prod'],
      data: { token: 'tok-create-123' },
      meta: { owner: 'team-a', environment: 'prod', version: 1 },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'description', 'id', 'meta', 'name', 'schema', 'tags', 'type', 'updated_at']);
    expect(res.body).toMatchObject({
      name: 'create_auth',
      type: 'bearer',
      description: 'API token',
      tags: ['api', 'prod'],
      meta: { owner: 'team-a', environment: 'prod', version: 1 },
      schema: null,
    });
    expect(typeof res.body.id).toBe('string');
    expect(res.body.id).toMatch(/^\d+$/);
    expect(res.body.created_at).toMatch(ISO_UTC);
    expect(res.body.updated_at).toMatch(ISO_UTC);
    expect(JSON.stringify(res.body)).not.toContain('tok-create-123');
  });

  it('updates by name (200): same id, new data; omitted optional fields keep their stored value, null clears', async () => {
    const created = await post({ name: 'update_auth', type: 'basic', description: 'v1', tags: ['a'], meta: { v: 1 }, data: { username: 'u', password: 'p1' } });
    expect(created.status).toBe(201);
    const updated = await post({ name: 'update_auth', type: 'basic', data: { username: 'u', password: 'p2' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, description: 'v1', tags: ['a'], meta: { v: 1 } });
    expect(updated.body.created_at).toBe(created.body.created_at);
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    const withData = await get('/api/credentials/update_auth?include_data=true');
    expect(withData.body.data).toEqual({ username: 'u', password: 'p2' });

    const cleared = await post({ name: 'update_auth', type: 'basic', description: null, tags: [], meta: null, data: { username: 'u', password: 'p3' } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ description: null, tags: [], meta: null });
    expect(await rowCount('update_auth')).toBe(1);
  });

  it('accepts every spec type (with its example data) and refuses others with 400 listing the allowed ones (nothing stored)', async () => {
    for (const { type, example } of CREDENTIAL_TYPE_SPECS) {
      const res = await post({ name: `type_${type}_auth`, type, data: example });
      expect(res.status, type).toBe(201);
      expect(res.body.type).toBe(type);
    }
    const res = await post({ name: 'weird_auth', type: 'ftp', data: { k: 'v' } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe(
      "unknown credential type 'ftp'; allowed types: postgres, oauth2, bearer, basic, api_key, service_account, custom, nats, clickhouse, snowflake",
    );
    expect(await rowCount('weird_auth')).toBe(0);
  });

  it('stores postgres credentials with plain and db_-prefixed field names unchanged', async () => {
    const plain = { host: 'db.internal', port: 5432, user: 'svc', password: 'pg-plain-pw', database: 'app' };
    const prefixed = { db_host: 'db.internal', db_port: '5432', db_user: 'svc', db_password: 'pg-prefixed-pw', db_name: 'app' };
    expect((await post({ name: 'pg_plain_auth', type: 'postgres', data: plain })).status).toBe(201);
    expect((await post({ name: 'pg_prefixed_auth', type: 'postgres', data: prefixed })).status).toBe(201);
    expect((await get('/api/credentials/pg_plain_auth?include_data=true')).body.data).toEqual(plain);
    expect((await get('/api/credentials/pg_prefixed_auth?include_data=true')).body.data).toEqual(prefixed);
  });

  it('refuses malformed requests with 422 and a detail, without echoing the data', async () => {
    const cases: unknown[] = [
      { name: 'x_auth', type: 'bearer' },
      { name: 'x_auth', type: 'bearer', data: ['secret-in-array'] },
      { name: 'x_auth', type: 'bearer', data: 'secret-as-string' },
      { name: '12345', type: 'bearer', data: {} },
      { name: 'a/b', type: 'bearer', data: {} },
      { name: '', type: 'bearer', data: {} },
      { name: 'x_auth', type: 'bearer', data: {}, tags: 'one' },
    ];
    for (const body of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail).toBeDefined();
      expect(JSON.stringify(res.body)).not.toContain('secret-');
    }
    expect(await rowCount('x_auth')).toBe(0);
  });
});

describe('schema validation on store', () => {
  const schema = {
    fields: ['host', 'port', 'user', 'password', 'ratio', 'tls', 'hosts', 'opts'],
    required: ['host', 'user', 'password'],
    types: { host: 'string', port: 'integer', ratio: 'number', tls: 'boolean', hosts: 'array', opts: 'object' },
    description: 'database login',
  };
  const expectRefused = async (name: string, data: unknown, errors: string[], s: unknown = schema) => {
    const res = await post({ name, type: 'custom', data, schema: s });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: { code: 'validation_failed', message: 'Credential validation failed', errors } });
    expect(await rowCount(name)).toBe(0);
  };

  it('Missing required field: <field>, once per missing field', async () => {
    await expectRefused('s_missing', { host: 'h' }, ['Missing required field: user', 'Missing required field: password']);
  });

  it("Field '<field>' must be <type>, got <actual_type>", async () => {
    await expectRefused('s_types', { host: 5, user: 'u', password: 'p', port: '5432', tls: 'yes', hosts: {}, opts: [], ratio: 'x' }, [
      "Field 'host' must be string, got integer",
      "Field 'port' must be integer, got string",
      "Field 'ratio' must be number, got string",
      "Field 'tls' must be boolean, got string",
      "Field 'hosts' must be array, got object",
      "Field 'opts' must be object, got array",
    ]);
    await expectRefused('s_float', { host: 'h', user: 'u', password: 'p', port: 1.5 }, ["Field 'port' must be integer, got number"]);
  });

  it('number accepts integers and floats', async () => {
    for (const [name, ratio] of [['s_num_int', 2], ['s_num_float', 0.25]] as const) {
      const res = await post({ name, type: 'custom', data: { host: 'h', user: 'u', password: 'p', ratio }, schema });
      expect(res.status).toBe(201);
      expect(res.body.schema).toEqual(schema);
    }
  });

  it('Unexpected fields: <list> when fields is non-empty; an empty fields list allows anything', async () => {
    await expectRefused('s_extra', { host: 'h', user: 'u', password: 'p', zone: 'z', region: 'r' }, ['Unexpected fields: zone, region']);
    const open = await post({ name: 's_open', type: 'custom', data: { anything: 1 }, schema: { fields: [], required: [] } });
    expect(open.status).toBe(201);
  });

  it('every rule at once, in rule order', async () => {
    await expectRefused('s_all', { host: 1, zone: 'z' }, [
      'Missing required field: user',
      'Missing required field: password',
      "Field 'host' must be string, got integer",
      'Unexpected fields: zone',
    ]);
  });

  it('without a schema the data is accepted unchanged', async () => {
    const data = { nested: { deep: [1, 'two', null] }, flag: false, n: 1.5 };
    expect((await post({ name: 's_none', type: 'custom', data })).status).toBe(201);
    expect((await get('/api/credentials/s_none?include_data=true')).body.data).toEqual(data);
  });

  it('a malformed schema is refused with an Invalid schema error', async () => {
    await expectRefused('s_bad_schema', { a: 1 }, ["Invalid schema: types.a: Invalid type: Expected (\"string\" | \"integer\" | \"boolean\" | \"number\" | \"array\" | \"object\") but received \"text\""], {
      types: { a: 'text' },
    });
  });

  it('an update without a schema is checked against the stored schema and leaves the old data on failure', async () => {
    expect((await post({ name: 's_keep', type: 'custom', data: { host: 'h', user: 'u', password: 'old-pw' }, schema })).status).toBe(201);
    const res = await post({ name: 's_keep', type: 'custom', data: { host: 'h' } });
    expect(res.status).toBe(400);
    expect(res.body.detail.errors).toEqual(['Missing required field: user', 'Missing required field: password']);
    expect((await get('/api/credentials/s_keep?include_data=true')).body.data).toEqual({ host: 'h', user: 'u', password: 'old-pw' });
  });
});

describe('GET /api/credentials/{identifier}', () => {
  it('finds by id or by name; include_data adds the decrypted data; unknown is 404', async () => {
    const created = await post({ name: 'get_auth', type: 'api_key', data: { key: 'get-key-value' }, tags: ['t'] });
    const byName = await get('/api/credentials/get_auth');
    const byId = await get(`/api/credentials/${created.body.id}`);
    expect(byName.status).toBe(200);
    expect(byId.body).toEqual(byName.body);
    expect(byName.body).toEqual(created.body);
    expect(byName.body.data).toBeUndefined();
    expect((await get('/api/credentials/get_auth?include_data=false')).body.data).toBeUndefined();

    const withData = await get(`/api/credentials/${created.body.id}?include_data=true`);
    expect(withData.status).toBe(200);
    expect(withData.body).toEqual({ ...created.body, data: { key: 'get-key-value' } });

    for (const path of ['/api/credentials/nope_auth', '/api/credentials/987654', '/api/credentials/nope_auth?include_data=true']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(typeof res.body.detail).toBe('string');
    }
    expect((await get('/api/credentials/nope_auth')).body.detail).toBe("credential 'nope_auth' not found");
    expect((await get('/api/credentials/get_auth?include_data=maybe')).status).toBe(422);
  });

  it('include_data reads as a boolean query value does: any case, and yes/no, on/off (Python requests sends True)', async () => {
    await post({ name: 'bool_auth', type: 'bearer', data: { token: 'bool-token-value' } });
    for (const yes of ['True', 'TRUE', '1', 'yes', 'On']) {
      const res = await get(`/api/credentials/bool_auth?include_data=${yes}`);
      expect(res.status, yes).toBe(200);
      expect(res.body.data, yes).toEqual({ token: 'bool-token-value' });
    }
    for (const no of ['False', '0', 'no', 'OFF']) {
      const res = await get(`/api/credentials/bool_auth?include_data=${no}`);
      expect(res.status, no).toBe(200);
      expect(res.body.data, no).toBeUndefined();
    }
    for (const bad of ['maybe', '', 'truthy']) {
      const res = await get(`/api/credentials/bool_auth?include_data=${bad}`);
      expect(res.status, bad).toBe(422);
      expect(res.body.detail.errors, bad).toEqual(['include_data: must be true or false']);
    }
  });

  it('data_encrypted holds no plaintext (neither values nor field names)', async () => {
    await post({ name: 'raw_auth', type: 'oauth2', data: { client_id: 'cid-visible?', client_secret: 'very-secret-client-value', token_url: 'https://idp.example/token' } });
    const { rows } = await t.deps.db.query<{ data_encrypted: string }>('SELECT data_encrypted FROM core.credential WHERE name = $1', [
      'raw_auth',
    ]);
    const sealed = rows[0].data_encrypted;
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    for (const plain of ['very-secret-client-value', 'client_secret', 'cid-visible', 'idp.example']) expect(sealed).not.toContain(plain);
  });

  it('ciphertext copied onto another row does not open: 409 with a clear detail, metadata still readable', async () => {
    await post({ name: 'victim_auth', type: 'bearer', data: { token: 'victim-token-value' } });
    await post({ name: 'thief_auth', type: 'bearer', data: { token: 'thief-token-value' } });
    await t.deps.db.query(
      `UPDATE core.credential SET data_encrypted = (SELECT data_encrypted FROM core.credential WHERE name = 'victim_auth') WHERE name = 'thief_auth'`,
    );
    const res = await get('/api/credentials/thief_auth?include_data=true');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      detail: "credential 'thief_auth' cannot be opened with the configured keys: its stored text was changed or damaged since it was sealed (authentication failed)",
    });
    expect((await get('/api/credentials/thief_auth')).status).toBe(200);
    const warn = t.logs.find((l) => l.includes('credential data cannot be opened'));
    expect(warn).toBeDefined();
    expect(warn).toContain('thief_auth');
    expect(warn).not.toContain('victim-token-value');
  });
});

describe('GET /api/credentials (list)', () => {
  beforeAll(async () => {
    await post({ name: 'list_pg_main', type: 'postgres', description: 'Main WAREHOUSE database', tags: ['Finance', 'prod'], data: { host: 'h' } });
    await post({ name: 'list_pg_replica', type: 'postgres', description: 'read replica', tags: ['ops'], data: { host: 'h' } });
    await post({ name: 'list_token', type: 'bearer', description: '100% coverage', tags: ['finance-api'], data: { token: 'x' } });
  });
  const names = (body: Json): string[] => body.credentials.map((c: Json) => c.name);

  it('lists metadata with a count, filtered by type', async () => {
    const all = await get('/api/credentials');
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(all.body.credentials.length);
    expect(all.body.credentials.every((c: Json) => c.data === undefined)).toBe(true);
    const pg = await get('/api/credentials?type=postgres&q=list_');
    expect(names(pg.body)).toEqual(['list_pg_main', 'list_pg_replica']);
    expect(pg.body.count).toBe(2);
    expect((await get('/api/credentials?type=')).body.count).toBe(all.body.count);
  });

  it('refuses a type no credential can have, naming the types, where it listed nothing', async () => {
    for (const type of ['Bearer', 'postgresql']) {
      const r = await get(`/api/credentials?type=${type}`);
      expect(r.status, type).toBe(422);
      expect(r.body.detail.errors).toEqual(['type: must be one of postgres, oauth2, bearer, basic, api_key, service_account, custom, nats, clickhouse, snowflake']);
    }
  });

  it('q searches name, description and tags, case-insensitively; LIKE wildcards are literal', async () => {
    expect(names((await get('/api/credentials?q=REPLICA')).body)).toEqual(['list_pg_replica']);
    expect(names((await get('/api/credentials?q=warehouse')).body)).toEqual(['list_pg_main']);
    expect(names((await get('/api/credentials?q=finance')).body)).toEqual(['list_pg_main', 'list_token']);
    expect(names((await get('/api/credentials?q=finance&type=bearer')).body)).toEqual(['list_token']);
    expect(names((await get(`/api/credentials?q=${encodeURIComponent('100%')}`)).body)).toEqual(['list_token']);
    expect(names((await get(`/api/credentials?q=${encodeURIComponent('%')}`)).body)).toEqual(['list_token']);
    expect((await get('/api/credentials?q=no-such-thing')).body).toEqual({ credentials: [], count: 0 });
  });
});

describe('DELETE /api/credentials/{name}', () => {
  it('deletes and answers success; unknown is 404', async () => {
    await post({ name: 'delete_auth', type: 'bearer', data: { token: 'x' } });
    const res = await http(t.url, 'DELETE', '/api/credentials/delete_auth');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: "Credential 'delete_auth' deleted", name: 'delete_auth' });
    expect((await get('/api/credentials/delete_auth')).status).toBe(404);
    const again = await http(t.url, 'DELETE', '/api/credentials/delete_auth');
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: "credential 'delete_auth' not found" });
  });

  it('takes the id the create answered, as GET does: PUT, PATCH and DELETE /api/credentials/{id} reach the credential', async () => {
    const { id } = (await post({ name: 'by_id_auth', type: 'bearer', data: { token: 'one' } })).body;
    expect((await get(`/api/credentials/${id}`)).body.name).toBe('by_id_auth');
    expect((await http(t.url, 'PUT', `/api/credentials/${id}`, { data: { token: 'two' } })).status).toBe(200);
    const patched = await http(t.url, 'PATCH', `/api/credentials/${id}`, { description: 'by id' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, name: 'by_id_auth', description: 'by id' });
    expect((await get('/api/credentials/by_id_auth?include_data=true')).body.data).toEqual({ token: 'two' });
    const deleted = await http(t.url, 'DELETE', `/api/credentials/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: 'success', message: "Credential 'by_id_auth' deleted", name: 'by_id_auth' });
    expect(await rowCount('by_id_auth')).toBe(0);
    expect((await http(t.url, 'DELETE', `/api/credentials/${id}`)).body).toEqual({ detail: `credential '${id}' not found` });
  });
});
