import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
let catalogId: number;
// An execution tree: ROOT → CHILD → GRANDCHILD, ROOT → SIBLING; UNRELATED is its own root.
const ROOT = 9001;
const CHILD = 9002;
const SIBLING = 9003;
const GRANDCHILD = 9004;
const UNRELATED = 9100;
// Has no core.execution row: treated as its own root.
const UNPROJECTED = 9200;

async function insertExecution(id: number, parent: number | null, root: number): Promise<void> {
  await t.deps.db.query(
    `INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id) VALUES ($1, $2, 'kc/test', $3, $4)`,
    [id, catalogId, parent, root],
  );
}

beforeAll(async () => {
  t = await startTestApp();
  const { rows } = await t.deps.db.query<{ catalog_id: number }>(
    `INSERT INTO core.catalog (path, version, content, payload) VALUES ('kc/test', 1, 'x', '{}') RETURNING catalog_id`,
  );
  catalogId = rows[0].catalog_id;
  await insertExecution(ROOT, null, ROOT);
  await insertExecution(CHILD, ROOT, ROOT);
  await insertExecution(SIBLING, ROOT, ROOT);
  await insertExecution(GRANDCHILD, CHILD, ROOT);
  await insertExecution(UNRELATED, null, UNRELATED);
});
afterAll(async () => t?.close());

const entryPath = (name: string, query = '') => `/api/keychain/${catalogId}/${name}${query}`;
const store = (name: string, body: Record<string, unknown>) => http(t.url, 'POST', entryPath(name), { credential_type: 'bearer', ...body });
const read = (name: string, query = '') => http(t.url, 'GET', entryPath(name, query));
const scopeQuery = (scope: string, executionId?: number) => `?scope_type=${scope}${executionId === undefined ? '' : `&execution_id=${executionId}`}`;
const cacheKeyOf = (name: string, scope: 'global' | 'local' | 'shared', executionId: number) =>
  scope === 'global' ? `${name}:${catalogId}:global` : scope === 'local' ? `${name}:${catalogId}:${executionId}` : `${name}:${catalogId}:shared:${executionId}`;
const raw = async (cacheKey: string) =>
  (await t.deps.db.query('SELECT * FROM core.keychain WHERE cache_key = $1', [cacheKey])).rows[0] as Json;

const LIVE_KEYS = [
  'access_count',
  'accessed_at',
  'auto_renew',
  'cache_key',
  'cache_type',
  'catalog_id',
  'credential_type',
  'expired',
  'expires_at',
  'keychain_name',
  'scope_type',
  'status',
  'token_data',
  'ttl_seconds',
];

describe('POST /api/keychain/{catalog_id}/{keychain_name}', () => {
  it('global: default TTL 86400 s, the spec response fields, 201 then 200 on replace', async () => {
    const before = Date.now();
    const res = await store('g_default', { token_data: { access_token: 'g-token' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['auto_renew', 'cache_key', 'catalog_id', 'expires_at', 'keychain_name', 'message', 'status', 'ttl_seconds']);
    expect(res.body).toMatchObject({
      status: 'success',
      message: 'Token cached with TTL 86400s (default for global scope)',
      keychain_name: 'g_default',
      catalog_id: catalogId,
      cache_key: `g_default:${catalogId}:global`,
      ttl_seconds: 86400,
      auto_renew: false,
    });
    const expires = Date.parse(res.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 86400_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86400_000 + 1000);
    const again = await store('g_default', { token_data: { access_token: 'g-token-2' } });
    expect(again.status).toBe(200);
  });

  it('a replacement without credential_type keeps the stored one; a new entry without it is 400 naming it and stores nothing', async () => {
    expect((await store('typed', { credential_type: 'http', token_data: { api_key: 'k1' } })).status).toBe(201);
    const replaced = await http(t.url, 'POST', entryPath('typed'), { token_data: { api_key: 'k2' } });
    expect(replaced.status).toBe(200);
    expect(await raw(cacheKeyOf('typed', 'global', 0))).toMatchObject({ credential_type: 'http', access_count: 0 });
    expect((await read('typed')).body).toMatchObject({ credential_type: 'http', token_data: { api_key: 'k2' } });

    const untyped = await http(t.url, 'POST', entryPath('untyped'), { token_data: { api_key: 'k' } });
    expect(untyped.status).toBe(400);
    expect(JSON.stringify(untyped.body.detail)).toContain('credential_type');
    expect(await raw(cacheKeyOf('untyped', 'global', 0))).toBeUndefined();
  });

  it('local: default TTL 3600 s; shared: 86400 s; the message names the scope', async () => {
    const local = await store('l_default', { token_data: { t: 1 }, scope_type: 'local', execution_id: ROOT });
    expect(local.body).toMatchObject({ message: 'Token cached with TTL 3600s (default for local scope)', ttl_seconds: 3600, cache_key: `l_default:${catalogId}:${ROOT}` });
    const shared = await store('s_default', { token_data: { t: 1 }, scope_type: 'shared', execution_id: ROOT });
    expect(shared.body).toMatchObject({ message: 'Token cached with TTL 86400s (default for shared scope)', ttl_seconds: 86400, cache_key: `s_default:${catalogId}:shared:${ROOT}` });
  });

  it('ttl_seconds is applied; expires_at wins over ttl_seconds', async () => {
    const ttl = await store('ttl_given', { token_data: { t: 1 }, ttl_seconds: 120 });
    expect(ttl.body).toMatchObject({ message: 'Token cached with TTL 120s', ttl_seconds: 120 });
    const at = new Date(Date.now() + 600_000).toISOString();
    const both = await store('expires_given', { token_data: { t: 1 }, ttl_seconds: 120, expires_at: at });
    expect(both.body.expires_at).toBe(at);
    expect(both.body.ttl_seconds).toBeGreaterThan(590);
    expect(both.body.ttl_seconds).toBeLessThanOrEqual(600);
    expect(both.body.message).toBe(`Token cached with TTL 600s (until ${at})`);
  });

  it('expires_at is ISO 8601, UTC unless it names an offset (Python writes utcnow().isoformat() so); a day that does not exist is 422', async () => {
    const naive = await store('expires_naive', { token_data: { t: 1 }, expires_at: '2030-01-01T00:00:00.250000' });
    expect(naive.status).toBe(201);
    expect(naive.body.expires_at).toBe('2030-01-01T00:00:00.250Z');
    expect((await store('expires_offset', { token_data: { t: 1 }, expires_at: '2030-01-01T09:00:00+09:00' })).body.expires_at).toBe('2030-01-01T00:00:00.000Z');
    for (const text of ['2027-02-30T00:00:00Z', 'March 7, 2030', '2030']) {
      const res = await store('expires_bad', { token_data: { t: 1 }, expires_at: text });
      expect(res.status, text).toBe(422);
      expect(res.body.detail.errors, text).toEqual([expect.stringMatching(/^expires_at: /)]);
    }
    expect(await raw(`expires_bad:${catalogId}:global`)).toBeUndefined();
  });

  it('shared entries are keyed and owned by the ROOT execution, local ones by their own execution', async () => {
    const shared = await store('s_from_child', { token_data: { t: 1 }, scope_type: 'shared', execution_id: GRANDCHILD, parent_execution_id: CHILD });
    expect(shared.body.cache_key).toBe(`s_from_child:${catalogId}:shared:${ROOT}`);
    expect(await raw(shared.body.cache_key)).toMatchObject({ execution_id: ROOT, parent_execution_id: CHILD, scope_type: 'shared' });
    const local = await store('l_child', { token_data: { t: 1 }, scope_type: 'local', execution_id: CHILD, parent_execution_id: ROOT });
    expect(await raw(local.body.cache_key)).toMatchObject({ execution_id: CHILD, parent_execution_id: ROOT, scope_type: 'local' });
    // No execution row: the given id is the root.
    const unprojected = await store('s_unprojected', { token_data: { t: 1 }, scope_type: 'shared', execution_id: UNPROJECTED });
    expect(unprojected.body.cache_key).toBe(`s_unprojected:${catalogId}:shared:${UNPROJECTED}`);
  });

  it('token_data and renew_config are sealed at rest', async () => {
    const res = await store('sealed', {
      token_data: { access_token: 'sealed-access-token' },
      auto_renew: true,
      renew_config: { endpoint: 'https://idp.example/token', data: { client_secret: 'renew-client-secret' } },
    });
    const row = await raw(res.body.cache_key);
    expect(row.data_encrypted).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(typeof row.renew_config).toBe('string');
    expect(JSON.stringify(row)).not.toContain('sealed-access-token');
    expect(JSON.stringify(row)).not.toContain('renew-client-secret');
    expect(row.cache_type).toBe('token');
  });

  it('refuses: schema failure (400 Credential validation failed, the service error Token validation failed), missing execution_id (400), unknown catalog (404), bad shapes (422)', async () => {
    const schema = { fields: ['access_token', 'expires_in'], required: ['access_token'], types: { expires_in: 'integer' } };
    const bad = await store('bad_schema', { token_data: { expires_in: 'soon', extra: 'x' }, schema });
    expect(bad.status).toBe(400);
    // The spec's Errors table: keychain data failing its schema has the credential's detail
    // (message and errors); the keychain service's own error text rides along.
    expect(bad.body).toEqual({
      detail: {
        code: 'validation_failed',
        message: 'Credential validation failed',
        errors: ['Missing required field: access_token', "Field 'expires_in' must be integer, got string", 'Unexpected fields: extra'],
        error: "Token validation failed: Missing required field: access_token; Field 'expires_in' must be integer, got string; Unexpected fields: extra",
      },
    });
    expect(await raw(`bad_schema:${catalogId}:global`)).toBeUndefined();
    // A failing replacement leaves the stored entry as it was.
    expect((await store('bad_schema', { token_data: { access_token: 'kept', expires_in: 60 }, schema })).status).toBe(201);
    const replaced = await store('bad_schema', { token_data: { access_token: 'not-kept', expires_in: 'later' }, schema });
    expect(replaced.status).toBe(400);
    expect(replaced.body.detail.errors).toEqual(["Field 'expires_in' must be integer, got string"]);
    expect(JSON.stringify(replaced.body)).not.toContain('later');
    expect((await read('bad_schema')).body.token_data).toEqual({ access_token: 'kept', expires_in: 60 });
    const good = await store('good_schema', { token_data: { access_token: 'a', expires_in: 60 }, schema });
    expect(good.status).toBe(201);

    for (const scope of ['local', 'shared']) {
      const res = await store('no_exec', { token_data: { t: 1 }, scope_type: scope });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: `execution_id is required for scope_type '${scope}'` });
    }
    const unknownCatalog = await http(t.url, 'POST', `/api/keychain/987654/x`, { token_data: { t: 1 }, credential_type: 'bearer' });
    expect(unknownCatalog.status).toBe(404);
    expect(unknownCatalog.body).toEqual({ detail: 'catalog entry 987654 not found' });

    const renewless = await store('renewless', { token_data: { t: 1 }, auto_renew: true });
    expect(renewless.status).toBe(400);
    expect(renewless.body).toEqual({ detail: 'auto_renew requires renew_config' });

    for (const body of [
      { token_data: ['secret-array'] },
      { token_data: { t: 1 }, scope_type: 'catalog' },
      { token_data: { t: 1 }, cache_type: 'other' },
      { token_data: { t: 1 }, ttl_seconds: 0 },
      { token_data: { t: 1 }, expires_at: 'tomorrow' },
      { token_data: { t: 1 }, auto_renew: true, renew_config: { endpoint: 'not a url' } },
    ]) {
      const res = await store('shape', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(res.body)).not.toContain('secret-array');
    }
    expect((await http(t.url, 'POST', `/api/keychain/${catalogId}/a:b`, { token_data: {}, credential_type: 'x' })).status).toBe(422);
  });
});

describe('GET /api/keychain/{catalog_id}/{keychain_name}', () => {
  it('live: every spec field, ttl_seconds fractional seconds remaining, the access counted in one update', async () => {
    await store('live', { token_data: { access_token: 'live-token', n: 1 }, credential_type: 'oauth2', ttl_seconds: 300 });
    const first = await read('live');
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(LIVE_KEYS);
    expect(first.body).toMatchObject({
      status: 'success',
      keychain_name: 'live',
      catalog_id: catalogId,
      cache_key: `live:${catalogId}:global`,
      token_data: { access_token: 'live-token', n: 1 },
      credential_type: 'oauth2',
      cache_type: 'secret',
      scope_type: 'global',
      access_count: 1,
      auto_renew: false,
      expired: false,
    });
    expect(first.body.ttl_seconds).toBeGreaterThan(295);
    expect(first.body.ttl_seconds).toBeLessThan(300);
    expect(Number.isInteger(first.body.ttl_seconds)).toBe(false);
    const second = await read('live');
    const third = await read('live');
    expect([second.body.access_count, third.body.access_count]).toEqual([2, 3]);
    expect(Date.parse(third.body.accessed_at)).toBeGreaterThanOrEqual(Date.parse(first.body.accessed_at));
    expect((await raw(`live:${catalogId}:global`)).access_count).toBe(3);

    // Concurrent reads lose no increments.
    await Promise.all(Array.from({ length: 10 }, () => read('live')));
    expect((await raw(`live:${catalogId}:global`)).access_count).toBe(13);

    // Replacing the entry starts the count over.
    await store('live', { token_data: { access_token: 'live-token-2' }, ttl_seconds: 300 });
    expect((await read('live')).body).toMatchObject({ access_count: 1, token_data: { access_token: 'live-token-2' } });
  });

  it('live with a schema: the schema is in the answer (only then), so readers can check the entry against it', async () => {
    const schema = { fields: ['access_token', 'expires_in'], required: ['access_token'], types: { expires_in: 'integer' }, description: 'api token' };
    await store('with_schema', { token_data: { access_token: 'schema-token', expires_in: 60 }, schema });
    const res = await read('with_schema');
    expect(Object.keys(res.body).sort()).toEqual([...LIVE_KEYS, 'schema'].sort());
    expect(res.body.schema).toEqual(schema);
    expect(res.body.token_data).toEqual({ access_token: 'schema-token', expires_in: 60 });
    // Replaced without a schema: the key is gone again.
    await store('with_schema', { token_data: { access_token: 'schema-token-2' } });
    expect(Object.keys((await read('with_schema')).body).sort()).toEqual(LIVE_KEYS);
  });

  it('expired without auto_renew: status expired, no token data, access not counted', async () => {
    await store('old', { token_data: { access_token: 'old-token' }, expires_at: new Date(Date.now() - 1000).toISOString() });
    const res = await read('old');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'expired',
      keychain_name: 'old',
      catalog_id: catalogId,
      cache_key: `old:${catalogId}:global`,
      auto_renew: false,
      expired: true,
    });
    expect((await raw(`old:${catalogId}:global`)).access_count).toBe(0);
  });

  it('expired with auto_renew: renew_config (opened, defaults filled) is included', async () => {
    await store('renewable', {
      token_data: { access_token: 'renew-me' },
      expires_at: new Date(Date.now() - 1000).toISOString(),
      auto_renew: true,
      renew_config: { endpoint: 'https://idp.example/token', headers: { 'X-A': 'b' }, data: { grant_type: 'client_credentials', client_secret: 's3' } },
    });
    const res = await read('renewable');
    expect(res.body).toEqual({
      status: 'expired',
      keychain_name: 'renewable',
      catalog_id: catalogId,
      cache_key: `renewable:${catalogId}:global`,
      auto_renew: true,
      expired: true,
      renew_config: {
        endpoint: 'https://idp.example/token',
        method: 'POST',
        headers: { 'X-A': 'b' },
        data: { grant_type: 'client_credentials', client_secret: 's3' },
        token_field: 'access_token',
        ttl_field: 'expires_in',
      },
    });
  });

  it('missing: not_found with the cache key', async () => {
    const res = await read('never_stored');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'not_found', keychain_name: 'never_stored', catalog_id: catalogId, cache_key: `never_stored:${catalogId}:global` });
    const local = await read('never_stored', scopeQuery('local', CHILD));
    expect(local.body).toEqual({ status: 'not_found', keychain_name: 'never_stored', catalog_id: catalogId, cache_key: `never_stored:${catalogId}:${CHILD}` });
  });

  it('every scope gives the same response shapes (live, expired, missing)', async () => {
    const past = new Date(Date.now() - 5000).toISOString();
    for (const scope of ['global', 'local', 'shared'] as const) {
      const executionId = scope === 'global' ? undefined : ROOT;
      const q = scopeQuery(scope, executionId);
      await store(`shape_${scope}`, { token_data: { v: scope }, scope_type: scope, execution_id: executionId ?? null });
      const live = await read(`shape_${scope}`, q);
      expect(Object.keys(live.body).sort(), scope).toEqual(LIVE_KEYS);
      expect(live.body).toMatchObject({ status: 'success', scope_type: scope, token_data: { v: scope }, expired: false });
      await store(`shape_${scope}`, { token_data: { v: scope }, scope_type: scope, execution_id: executionId ?? null, expires_at: past });
      expect(Object.keys((await read(`shape_${scope}`, q)).body).sort(), scope).toEqual(['auto_renew', 'cache_key', 'catalog_id', 'expired', 'keychain_name', 'status']);
      expect(Object.keys((await read(`missing_${scope}`, q)).body).sort(), scope).toEqual(['cache_key', 'catalog_id', 'keychain_name', 'status']);

      // Expired with auto_renew: the same fields plus renew_config (opened, defaults filled).
      await store(`renew_${scope}`, {
        token_data: { v: scope },
        scope_type: scope,
        execution_id: executionId ?? null,
        expires_at: past,
        auto_renew: true,
        renew_config: { endpoint: `https://idp.example/${scope}`, method: 'PUT', data: { client_secret: `renew-${scope}` }, ttl_field: 'lifetime' },
      });
      const renewable = await read(`renew_${scope}`, q);
      expect(renewable.body, scope).toEqual({
        status: 'expired',
        keychain_name: `renew_${scope}`,
        catalog_id: catalogId,
        cache_key: cacheKeyOf(`renew_${scope}`, scope, ROOT),
        auto_renew: true,
        expired: true,
        renew_config: {
          endpoint: `https://idp.example/${scope}`,
          method: 'PUT',
          headers: {},
          data: { client_secret: `renew-${scope}` },
          token_field: 'access_token',
          ttl_field: 'lifetime',
        },
      });
      // Read from another execution of the tree: local is not visible there, shared is the same entry.
      if (scope !== 'global') {
        const fromChild = await read(`renew_${scope}`, scopeQuery(scope, CHILD));
        expect(fromChild.body.status, scope).toBe(scope === 'shared' ? 'expired' : 'not_found');
        if (scope === 'shared') expect(fromChild.body).toEqual(renewable.body);
      }
    }
  });

  it('local/shared reads without execution_id are 400; a bad scope_type is 422', async () => {
    for (const scope of ['local', 'shared']) {
      const res = await read('x', `?scope_type=${scope}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: `execution_id is required for scope_type '${scope}'` });
    }
    expect((await read('x', '?scope_type=catalog')).status).toBe(422);
    expect((await read('x', '?scope_type=local&execution_id=abc')).status).toBe(422);
  });

  it('an entry whose ciphertext belongs to another row answers 409, never the other row data', async () => {
    await store('kc_victim', { token_data: { access_token: 'victim-kc-token' } });
    await store('kc_thief', { token_data: { access_token: 'thief-kc-token' } });
    await t.deps.db.query(
      `UPDATE core.keychain SET data_encrypted = (SELECT data_encrypted FROM core.keychain WHERE keychain_name = 'kc_victim') WHERE keychain_name = 'kc_thief'`,
    );
    const res = await read('kc_thief');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      detail: 'keychain data cannot be opened with the configured keys: its stored text was changed or damaged since it was sealed (authentication failed)',
    });
  });
});

describe('visibility by scope', () => {
  beforeAll(async () => {
    await store('vis', { token_data: { who: 'global' } });
    await store('vis', { token_data: { who: 'local-root' }, scope_type: 'local', execution_id: ROOT });
    await store('vis', { token_data: { who: 'shared-from-child' }, scope_type: 'shared', execution_id: CHILD });
  });
  const who = async (scope: string, executionId?: number) => {
    const res = await read('vis', scopeQuery(scope, executionId));
    return res.body.status === 'success' ? res.body.token_data.who : res.body.status;
  };

  it('global: every execution, related or not, and no execution at all', async () => {
    for (const id of [undefined, ROOT, CHILD, SIBLING, GRANDCHILD, UNRELATED]) expect(await who('global', id)).toBe('global');
  });

  it('local: only the creating execution; its children, siblings and unrelated executions get not_found', async () => {
    expect(await who('local', ROOT)).toBe('local-root');
    for (const id of [CHILD, SIBLING, GRANDCHILD, UNRELATED]) expect(await who('local', id), String(id)).toBe('not_found');
  });

  it('shared: the root and every descendant (siblings included) share one entry; unrelated trees do not', async () => {
    for (const id of [ROOT, CHILD, SIBLING, GRANDCHILD]) expect(await who('shared', id), String(id)).toBe('shared-from-child');
    expect(await who('shared', UNRELATED)).toBe('not_found');
    expect(await who('shared', UNPROJECTED)).toBe('not_found');
  });
  // Removal at completion is tested through real runs in test/integration/keychain-worker/scope-cleanup.test.ts.
});

describe('DELETE and list', () => {
  it('DELETE answers success with the spec fields, uses the same scope query as GET; missing is 404', async () => {
    await store('del', { token_data: { t: 1 }, scope_type: 'shared', execution_id: ROOT });
    const wrongScope = await http(t.url, 'DELETE', entryPath('del'));
    expect(wrongScope.status).toBe(404);
    const res = await http(t.url, 'DELETE', entryPath('del', scopeQuery('shared', SIBLING)));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: "Keychain entry 'del' deleted", keychain_name: 'del', catalog_id: catalogId });
    expect((await read('del', scopeQuery('shared', ROOT))).body.status).toBe('not_found');
    expect((await http(t.url, 'DELETE', entryPath('del', scopeQuery('local')))).status).toBe(400);
  });

  it('GET /api/keychain/catalog/{catalog_id} lists every entry with the spec fields and a count', async () => {
    const { rows } = await t.deps.db.query<{ catalog_id: number }>(
      `INSERT INTO core.catalog (path, version, content, payload) VALUES ('kc/list', 1, 'x', '{}') RETURNING catalog_id`,
    );
    const other = rows[0].catalog_id;
    const empty = await http(t.url, 'GET', `/api/keychain/catalog/${other}`);
    expect(empty.body).toEqual({ status: 'success', catalog_id: other, entries: [], count: 0 });
    // An id no catalog entry has is 404, as storing under it is.
    const unknown = await http(t.url, 'GET', '/api/keychain/catalog/999999999');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('catalog entry 999999999 not found');
    await http(t.url, 'POST', `/api/keychain/${other}/b_entry`, { token_data: { secret: 'list-secret' }, credential_type: 'bearer', scope_type: 'local', execution_id: ROOT });
    await http(t.url, 'POST', `/api/keychain/${other}/a_entry`, {
      token_data: { secret: 'list-secret' },
      credential_type: 'oauth2',
      auto_renew: true,
      renew_config: { endpoint: 'https://idp.example/t' },
    });
    await http(t.url, 'GET', `/api/keychain/${other}/a_entry`);
    const res = await http(t.url, 'GET', `/api/keychain/catalog/${other}`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.entries.map((e: Json) => Object.keys(e).sort())).toEqual([
      ['access_count', 'auto_renew', 'cache_key', 'credential_type', 'expires_at', 'keychain_name', 'scope_type'],
      ['access_count', 'auto_renew', 'cache_key', 'credential_type', 'expires_at', 'keychain_name', 'scope_type'],
    ]);
    expect(res.body.entries).toMatchObject([
      { keychain_name: 'a_entry', cache_key: `a_entry:${other}:global`, scope_type: 'global', credential_type: 'oauth2', auto_renew: true, access_count: 1 },
      { keychain_name: 'b_entry', cache_key: `b_entry:${other}:${ROOT}`, scope_type: 'local', credential_type: 'bearer', auto_renew: false, access_count: 0 },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('list-secret');
  });
});
