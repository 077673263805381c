// Credential types with known fields (src/credential/credential-types.ts): validation on create and
// update with the spec's error strings, PUT/PATCH, and POST /api/credentials/{name}/test against real
// targets (this machine's PostgreSQL, an HTTP server on port 0, a real nats-server). No secret in
// any answer or log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startNatsServer, type NatsServer } from '../../helpers/nats-server.ts';

const S = {
  bearer: 'bearer-secret-4c1e9a',
  wrongBearer: 'wrong-bearer-77ad20',
  basicPw: 'basic-secret-b0b0b0',
  wrongPgPw: 'wrong-pg-pw-9f8e7d',
  natsPw: 'nats-secret-5a5a5a',
  wrongNatsPw: 'wrong-nats-pw-6b6b6b',
};

let t: TestApp;
let target: HttpTarget;
let nats: NatsServer;
beforeAll(async () => {
  t = await startTestApp();
  // A target that accepts exactly the bearer token and the basic login above.
  target = await startHttpTarget((req, res) => {
    const auth = req.headers.authorization;
    const good = auth === `Bearer ${S.bearer}` || auth === `Basic ${Buffer.from(`alice:${S.basicPw}`).toString('base64')}`;
    res.writeHead(good ? 200 : 401, { 'content-type': 'application/json' });
    // An echo of what was sent: the test answer must not carry it.
    res.end(JSON.stringify({ got: auth ?? null }));
  });
  nats = await startNatsServer({ user: 'app', password: S.natsPw });
});
afterAll(async () => {
  await nats?.close();
  await target?.close();
  await t?.close();
});

const post = (body: unknown) => http(t.url, 'POST', '/api/credentials', body);
const put = (name: string, body: unknown) => http(t.url, 'PUT', `/api/credentials/${name}`, body);
const patch = (name: string, body: unknown) => http(t.url, 'PATCH', `/api/credentials/${name}`, body);
const probe = (name: string, body?: unknown) => http(t.url, 'POST', `/api/credentials/${name}/test`, body);
const dataOf = async (name: string) => (await http(t.url, 'GET', `/api/credentials/${name}?include_data=true`)).body.data;
const refusedWith = async (res: { status: number; body: { detail: unknown } }, errors: string[]) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({ detail: { code: 'validation_failed', message: 'Credential validation failed', errors } });
};
const pgFields = () => {
  const u = new URL(t.databaseUrl);
  return { host: u.hostname, port: Number(u.port || 5432), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: u.pathname.slice(1) };
};

describe('GET /api/credential-types', () => {
  it('lists every type with its fields, which are secret, what is required and its test', async () => {
    const res = await http(t.url, 'GET', '/api/credential-types');
    expect(res.status).toBe(200);
    const byType = Object.fromEntries(res.body.types.map((s: { type: string }) => [s.type, s]));
    expect(Object.keys(byType).sort()).toEqual(['api_key', 'basic', 'bearer', 'clickhouse', 'custom', 'nats', 'oauth2', 'postgres', 'service_account', 'snowflake']);
    expect(byType.postgres.fields.find((f: { name: string }) => f.name === 'password')).toMatchObject({ secret: true, kind: 'string' });
    expect(byType.postgres.fields.find((f: { name: string }) => f.name === 'db_host')).toMatchObject({ aliasOf: 'host', secret: false });
    expect(byType.postgres.test).toBe('postgres');
    expect(byType.bearer.required).toEqual([['token', 'access_token']]);
    expect(byType.snowflake.fields.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['account', 'user', 'password', 'warehouse', 'database']));
    expect(byType.custom.open).toBe(true);
    expect(res.body.types[0].schema).toBeUndefined();
  });
});

describe('built-in schemas on create', () => {
  it('postgres: plain and db_-prefixed names and connection strings pass; a missing host, a bad port, a typo and a wrong sslmode fail naming the field', async () => {
    expect((await post({ name: 'pg_url', type: 'postgres', data: { connection_string: 'postgres://u:p@h/db' } })).status).toBe(201);
    expect((await post({ name: 'pg_dsn', type: 'postgres', data: { dsn: 'postgres://h/db', sslmode: 'require' } })).status).toBe(201);
    await refusedWith(await post({ name: 'pg_bad', type: 'postgres', data: { user: 'u', password: S.wrongPgPw } }), [
      'Missing required field: host (or one of db_host, connection_string, url, dsn)',
    ]);
    await refusedWith(await post({ name: 'pg_bad', type: 'postgres', data: { host: 'h', port: 'five', hostname: 'x', sslmode: 'always' } }), [
      "Field 'port' must be integer, got string",
      "Field 'sslmode' must be one of: disable, allow, prefer, require, verify-ca, verify-full",
      'Unexpected fields: hostname',
    ]);
    await refusedWith(await post({ name: 'pg_bad', type: 'postgres', data: { host: 'h', db_port: 70000 } }), ["Field 'db_port' must be from 1 to 65535"]);
    expect((await http(t.url, 'GET', '/api/credentials/pg_bad')).status).toBe(404);
  });

  it('bearer, basic, api_key, oauth2, nats, snowflake, service_account, clickhouse: required fields and types; custom is free', async () => {
    await refusedWith(await post({ name: 'b_bad', type: 'bearer', data: { bearer: S.bearer } }), ['Missing required field: token (or one of access_token)', 'Unexpected fields: bearer']);
    expect((await post({ name: 'b_alias', type: 'bearer', data: { access_token: 'tok' } })).status).toBe(201);
    await refusedWith(await post({ name: 'basic_bad', type: 'basic', data: { password: 12 } }), [
      'Missing required field: username (or one of user)',
      "Field 'password' must be string, got integer",
    ]);
    await refusedWith(await post({ name: 'k_bad', type: 'api_key', data: { key: 'k', in: 'cookie' } }), ["Field 'in' must be one of: header, query"]);
    await refusedWith(await post({ name: 'o_bad', type: 'oauth2', data: { client_id: 'c', token_url: 'not a url' } }), [
      'Missing required field: client_secret',
      "Field 'token_url' must be a URL",
    ]);
    expect((await post({ name: 'o_ready', type: 'oauth2', data: { access_token: 'ready' } })).status).toBe(201);
    expect((await post({ name: 'o_scopes', type: 'oauth2', data: { token_url: 'https://idp/t', client_id: 'c', client_secret: 's', scope: ['a', 'b'] } })).status).toBe(201);
    await refusedWith(await post({ name: 'n_bad', type: 'nats', data: { user: 'u' } }), ['Missing required field: url (or one of servers)']);
    await refusedWith(await post({ name: 'sf_bad', type: 'snowflake', data: { account: 'a', warehouse: 1 } }), [
      'Missing required field: user',
      'Missing required field: password (or one of private_key)',
      "Field 'warehouse' must be string, got integer",
    ]);
    await refusedWith(await post({ name: 'sa_bad', type: 'service_account', data: { project_id: 'p' } }), ['Missing required field: client_email', 'Missing required field: private_key']);
    expect((await post({ name: 'sa_ok', type: 'service_account', data: { client_email: 'a@b', private_key: 'pem', universe_domain: 'googleapis.com' } })).status).toBe(201);
    await refusedWith(await post({ name: 'ch_bad', type: 'clickhouse', data: { host: 'h', secure: 'yes' } }), ["Field 'secure' must be boolean, got string"]);
    expect((await post({ name: 'c_free', type: 'custom', data: { anything: [1, { deep: true }] } })).status).toBe(201);
  });

  it('a credential schema applies on top of the type: both sets of errors', async () => {
    await refusedWith(await post({ name: 'both_bad', type: 'bearer', data: { tok: 'x' }, schema: { required: ['owner'] } }), [
      'Missing required field: token (or one of access_token)',
      'Unexpected fields: tok',
      'Missing required field: owner',
    ]);
  });

  it('errors never quote a value', async () => {
    const res = await post({ name: 'quiet_bad', type: 'basic', data: { username: 'u', password: { nested: S.basicPw }, pass: S.basicPw } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toContain(S.basicPw);
  });
});

describe('PUT and PATCH /api/credentials/{name}', () => {
  it('PUT replaces the data (re-sealed), keeps id, created_at and omitted metadata; validates; 404 for an unknown name', async () => {
    const created = await post({ name: 'put_auth', type: 'basic', description: 'd', tags: ['x'], meta: { owner: 'a' }, data: { username: 'u', password: 'p1' } });
    expect(created.status).toBe(201);
    const sealedBefore = (await t.deps.db.query<{ d: string }>(`SELECT data_encrypted AS d FROM core.credential WHERE name = 'put_auth'`)).rows[0].d;
    const res = await put('put_auth', { data: { username: 'u', password: 'p2' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.body.id, type: 'basic', description: 'd', tags: ['x'], meta: { owner: 'a' }, created_at: created.body.created_at });
    expect(JSON.stringify(res.body)).not.toContain('p2');
    expect(await dataOf('put_auth')).toEqual({ username: 'u', password: 'p2' });
    const sealedAfter = (await t.deps.db.query<{ d: string }>(`SELECT data_encrypted AS d FROM core.credential WHERE name = 'put_auth'`)).rows[0].d;
    expect(sealedAfter).not.toBe(sealedBefore);

    await refusedWith(await put('put_auth', { data: { password: 'p3' } }), ['Missing required field: username (or one of user)']);
    expect(await dataOf('put_auth')).toEqual({ username: 'u', password: 'p2' });
    // A type change is checked against the new type.
    await refusedWith(await put('put_auth', { type: 'bearer', data: { username: 'u' } }), ['Missing required field: token (or one of access_token)', 'Unexpected fields: username']);
    expect((await put('put_auth', { type: 'bearer', data: { token: 'tok' }, description: null })).body).toMatchObject({ type: 'bearer', description: null, tags: ['x'] });

    const missing = await put('no_such_auth', { data: { token: 'x' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: "credential 'no_such_auth' not found" });
    expect((await put('put_auth', { data: 'x' })).status).toBe(422);
  });

  it('PATCH merges data fields (null removes one), keeps metadata, validates the merged data', async () => {
    const created = await post({ name: 'patch_auth', type: 'postgres', tags: ['db'], data: { host: 'h', port: 5432, user: 'u', password: 'old', database: 'd' } });
    expect(created.status).toBe(201);
    const res = await patch('patch_auth', { data: { password: 'new', database: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.body.id, tags: ['db'] });
    expect(await dataOf('patch_auth')).toEqual({ host: 'h', port: 5432, user: 'u', password: 'new' });
    // Metadata alone.
    expect((await patch('patch_auth', { description: 'main db' })).body.description).toBe('main db');
    expect(await dataOf('patch_auth')).toEqual({ host: 'h', port: 5432, user: 'u', password: 'new' });
    await refusedWith(await patch('patch_auth', { data: { host: null, port: 'x' } }), [
      'Missing required field: host (or one of db_host, connection_string, url, dsn)',
      "Field 'port' must be integer, got string",
    ]);
    expect(await dataOf('patch_auth')).toEqual({ host: 'h', port: 5432, user: 'u', password: 'new' });
    expect((await patch('nope_auth', { data: {} })).status).toBe(404);
  });
});

describe('POST /api/credentials/{name}/test', () => {
  it('postgres: connects and runs SELECT 1; a wrong password fails with a message that does not hold it', async () => {
    expect((await post({ name: 'pg_live', type: 'postgres', data: pgFields() })).status).toBe(201);
    const ok = await probe('pg_live');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, type: 'postgres', message: "connected to credential 'pg_live' and ran SELECT 1" });
    expect(typeof ok.body.duration_ms).toBe('number');
    expect(JSON.stringify(ok.body)).not.toContain(pgFields().password || 'no-password-set');

    const { host, port, database } = pgFields();
    expect((await post({ name: 'pg_wrong', type: 'postgres', data: { host, port, database, user: 'nobody_here', password: S.wrongPgPw } })).status).toBe(201);
    const bad = await probe('pg_wrong');
    expect(bad.status).toBe(200);
    expect(bad.body.ok).toBe(false);
    expect(bad.body.message).toMatch(/password authentication failed|nobody_here|role/);
    expect(JSON.stringify(bad.body)).not.toContain(S.wrongPgPw);

    // A connection string with the wrong password: neither the password nor the string comes back.
    const url = `postgres://nobody_here:${S.wrongPgPw}@${host}:${port}/${database}`;
    expect((await post({ name: 'pg_wrong_url', type: 'postgres', data: { connection_string: url } })).status).toBe(201);
    const badUrl = await probe('pg_wrong_url');
    expect(badUrl.body.ok).toBe(false);
    expect(JSON.stringify(badUrl.body)).not.toContain(S.wrongPgPw);
    // An unreachable server fails within the bound.
    expect((await post({ name: 'pg_closed', type: 'postgres', data: { host: '127.0.0.1', port: 1, user: 'u', password: S.wrongPgPw } })).status).toBe(201);
    const closed = await probe('pg_closed');
    expect(closed.body.ok).toBe(false);
    expect(closed.body.message).toMatch(/ECONNREFUSED|connect/);
  });

  it('bearer and basic: sends the auth header to the given URL and reports the status; the answer never holds the secret', async () => {
    expect((await post({ name: 'http_bearer', type: 'bearer', data: { token: S.bearer } })).status).toBe(201);
    expect((await post({ name: 'http_wrong', type: 'bearer', data: { token: S.wrongBearer } })).status).toBe(201);
    expect((await post({ name: 'http_basic', type: 'basic', data: { username: 'alice', password: S.basicPw } })).status).toBe(201);

    const ok = await probe('http_bearer', { url: `${target.url}/check?x=1` });
    expect(ok.body).toMatchObject({ ok: true, status: 200, type: 'bearer', message: `${target.url}/check answered HTTP 200 OK` });
    expect(target.requests.at(-1)?.headers.authorization).toBe(`Bearer ${S.bearer}`);
    const basic = await probe('http_basic', { url: `${target.url}/check` });
    expect(basic.body).toMatchObject({ ok: true, status: 200 });
    const wrong = await probe('http_wrong', { url: `${target.url}/check` });
    expect(wrong.body).toMatchObject({ ok: false, status: 401, message: `${target.url}/check answered HTTP 401 Unauthorized` });
    for (const res of [ok, basic, wrong]) for (const secret of [S.bearer, S.wrongBearer, S.basicPw]) expect(JSON.stringify(res.body)).not.toContain(secret);

    const needsUrl = await probe('http_bearer');
    expect(needsUrl.status).toBe(400);
    expect(needsUrl.body.detail).toEqual({ code: 'credential_test_needs_url', message: 'testing a bearer credential needs a url to send the request to' });
    const unreachable = await probe('http_bearer', { url: 'http://127.0.0.1:1/x' });
    expect(unreachable.body.ok).toBe(false);
    expect(JSON.stringify(unreachable.body)).not.toContain(S.bearer);
    // A password in the URL itself: fetch's refusal quoted the URL, password and all, in the answer.
    const userinfo = await probe('http_bearer', { url: 'http://someone:url-password-9c1@127.0.0.1:1/x' });
    expect(userinfo.status).toBe(422);
    expect(userinfo.body.detail.errors).toEqual([expect.stringMatching(/^url: must not hold a user name or password/)]);
    expect(JSON.stringify(userinfo.body)).not.toContain('url-password-9c1');
  });

  it('nats: connects to a real nats-server (url or servers); a wrong password is refused without showing it', async () => {
    expect((await post({ name: 'nats_ok', type: 'nats', data: { url: nats.url, user: 'app', password: S.natsPw } })).status).toBe(201);
    expect((await post({ name: 'nats_wrong', type: 'nats', data: { url: nats.url, user: 'app', password: S.wrongNatsPw } })).status).toBe(201);
    const ok = await probe('nats_ok');
    expect(ok.body).toMatchObject({ ok: true, type: 'nats', message: `connected to nats server 127.0.0.1:${nats.port}` });
    const wrong = await probe('nats_wrong');
    expect(wrong.body.ok).toBe(false);
    expect(wrong.body.message).toMatch(/Authorization Violation/i);
    expect(JSON.stringify(wrong.body)).not.toContain(S.wrongNatsPw);
    // NATS's own form of a token: nats://TOKEN@host (a URL user without a password), or the token field.
    const tokenServer = await startNatsServer({ token: S.natsPw });
    try {
      expect((await post({ name: 'nats_url_token', type: 'nats', data: { url: `nats://${S.natsPw}@127.0.0.1:${tokenServer.port}` } })).status).toBe(201);
      expect((await post({ name: 'nats_token', type: 'nats', data: { url: tokenServer.url, token: S.natsPw } })).status).toBe(201);
      for (const name of ['nats_url_token', 'nats_token']) expect((await probe(name)).body, name).toMatchObject({ ok: true, message: `connected to nats server 127.0.0.1:${tokenServer.port}` });
    } finally {
      await tokenServer.close();
    }
    // DESIGN.md names the server `servers`: one URL, a list, or comma-separated URLs (the first is used).
    expect((await post({ name: 'nats_servers', type: 'nats', data: { servers: nats.url, user: 'app', password: S.natsPw } })).status).toBe(201);
    expect((await post({ name: 'nats_server_list', type: 'nats', data: { servers: [nats.url, 'nats://127.0.0.1:1'], user: 'app', password: S.natsPw } })).status).toBe(201);
    for (const name of ['nats_servers', 'nats_server_list']) expect((await probe(name)).body, name).toMatchObject({ ok: true, message: `connected to nats server 127.0.0.1:${nats.port}` });
    const closed = await post({ name: 'nats_closed', type: 'nats', data: { url: 'nats://127.0.0.1:1', token: S.natsPw } });
    expect(closed.status).toBe(201);
    expect((await probe('nats_closed')).body.ok).toBe(false);
  });

  it('types without a test answer 400 credential_test_unsupported; unknown names 404', async () => {
    expect((await post({ name: 'sf_auth', type: 'snowflake', data: { account: 'a', user: 'u', password: 'p' } })).status).toBe(201);
    const res = await probe('sf_auth');
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual({ code: 'credential_test_unsupported', message: "credential type 'snowflake' has no connection test" });
    expect((await probe('missing_auth')).status).toBe(404);
  });

  it('no secret of any test reached the log', () => {
    const logs = t.logs.join('');
    for (const secret of Object.values(S)) expect(logs).not.toContain(secret);
    expect(logs).toContain('credential tested');
  });
});
