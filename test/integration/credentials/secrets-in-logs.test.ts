import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readerPassword } from '../../../src/api/postgres.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let target: TestDatabase;
beforeAll(async () => {
  t = await startTestApp(); // logs at debug level into t.logs
  target = await createTestDatabase();
}, 120_000);
afterAll(async () => {
  await t?.close();
  await target?.drop();
});

// Every value below is a secret; none may reach a log line.
const S = {
  bearer: 'LOGSECRET-bearer-7f3a',
  password: 'LOGSECRET-password-91bc',
  updated: 'LOGSECRET-updated-22de',
  clientSecret: 'LOGSECRET-client-5e01',
  invalidData: 'LOGSECRET-invalid-0c4d',
  shapeData: 'LOGSECRET-shape-88aa',
  kcToken: 'LOGSECRET-kctoken-3b7c',
  kcRenew: 'LOGSECRET-kcrenew-6d2f',
  kcInvalid: 'LOGSECRET-kcinvalid-19e0',
  wrongPw: 'LOGSECRET-wrongpw-4a4a',
  sqlLiteral: 'LOGSECRET-sqlliteral-7777',
};

describe('secrets never reach the logs', () => {
  it('across credential, keychain and SQL calls, successful and failing', async () => {
    const call = (method: string, path: string, body?: unknown) => http(t.url, method, path, body);
    const target_ = new URL(target.url);

    // Credentials: create, update, read with data, list, schema failure, shape failure, unopenable, delete.
    await call('POST', '/api/credentials', { name: 'log_bearer', type: 'bearer', data: { token: S.bearer } });
    await call('POST', '/api/credentials', { name: 'log_oauth', type: 'oauth2', data: { client_id: 'c', client_secret: S.clientSecret, token_url: 'https://idp.example/t' } });
    await call('POST', '/api/credentials', {
      name: 'log_pg',
      type: 'postgres',
      data: { db_host: target_.hostname, db_port: target_.port, db_user: decodeURIComponent(target_.username), db_password: decodeURIComponent(target_.password), db_name: target_.pathname.slice(1) },
    });
    await call('POST', '/api/credentials', { name: 'log_basic', type: 'basic', data: { username: 'u', password: S.password } });
    await call('POST', '/api/credentials', { name: 'log_basic', type: 'basic', data: { username: 'u', password: S.updated } });
    expect((await call('GET', '/api/credentials/log_basic?include_data=true')).body.data.password).toBe(S.updated);
    await call('GET', '/api/credentials/log_oauth?include_data=true');
    await call('GET', '/api/credentials?q=log');
    const invalid = await call('POST', '/api/credentials', {
      name: 'log_invalid',
      type: 'custom',
      data: { apikey: S.invalidData, extra: S.invalidData },
      schema: { fields: ['apikey'], required: ['missing'], types: { apikey: 'integer' } },
    });
    expect(invalid.status).toBe(400);
    expect(JSON.stringify(invalid.body)).not.toContain(S.invalidData);
    const shape = await call('POST', '/api/credentials', { name: 'log_shape', type: 'custom', data: S.shapeData });
    expect(shape.status).toBe(422);
    expect(JSON.stringify(shape.body)).not.toContain(S.shapeData);
    await call('POST', '/api/credentials', { name: 'log_bad_type', type: 'nope', data: { token: S.bearer } });
    await t.deps.db.query(
      `UPDATE core.credential SET data_encrypted = (SELECT data_encrypted FROM core.credential WHERE name = 'log_bearer') WHERE name = 'log_oauth'`,
    );
    expect((await call('GET', '/api/credentials/log_oauth?include_data=true')).status).toBe(409);
    await call('DELETE', '/api/credentials/log_bearer');

    // Keychain: store, read live, expired with renew_config, list, schema failure, delete.
    const { rows } = await t.deps.db.query<{ catalog_id: number }>(
      `INSERT INTO core.catalog (path, version, content, payload) VALUES ('log/test', 1, 'x', '{}') RETURNING catalog_id`,
    );
    const c = rows[0].catalog_id;
    await call('POST', `/api/keychain/${c}/tok`, { token_data: { access_token: S.kcToken }, credential_type: 'bearer', scope_type: 'local', execution_id: 5 });
    expect((await call('GET', `/api/keychain/${c}/tok?scope_type=local&execution_id=5`)).body.token_data.access_token).toBe(S.kcToken);
    await call('POST', `/api/keychain/${c}/ren`, {
      token_data: { access_token: S.kcToken },
      credential_type: 'oauth2',
      expires_at: new Date(Date.now() - 1000).toISOString(),
      auto_renew: true,
      renew_config: { endpoint: 'https://idp.example/t', headers: { Authorization: `Basic ${S.kcRenew}` }, data: { client_secret: S.kcRenew } },
    });
    expect((await call('GET', `/api/keychain/${c}/ren`)).body.renew_config.data.client_secret).toBe(S.kcRenew);
    await call('GET', `/api/keychain/catalog/${c}`);
    const kcInvalid = await call('POST', `/api/keychain/${c}/inv`, {
      token_data: { access_token: 5, other: S.kcInvalid },
      credential_type: 'bearer',
      schema: { fields: ['access_token'], types: { access_token: 'string' } },
    });
    expect(kcInvalid.status).toBe(400);
    expect(JSON.stringify(kcInvalid.body)).not.toContain(S.kcInvalid);
    await call('DELETE', `/api/keychain/${c}/tok?scope_type=local&execution_id=5`);

    // SQL: a credential database, a failing login, a statement quoting a secret, the reader role.
    expect((await call('POST', '/api/postgres/execute', { query: 'SELECT 1 AS one', credential_name: 'log_pg' })).status).toBe(200);
    await call('POST', '/api/credentials', {
      name: 'log_pg_wrong',
      type: 'postgres',
      data: { host: target_.hostname, port: Number(target_.port), user: 'nobody', password: S.wrongPw, database: 'postgres' },
    });
    const wrong = await call('POST', '/api/postgres/execute', { query: 'SELECT 1', credential_name: 'log_pg_wrong' });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).not.toContain(S.wrongPw);
    expect((await call('POST', '/api/postgres/execute', { query: `SELECT '${S.sqlLiteral}'::int` })).status).toBe(400);
    expect((await call('POST', '/api/postgres/execute', { query: `SELECT '${S.sqlLiteral}' AS s` })).status).toBe(200);

    const logs = t.logs.join('');
    expect(logs).toContain('credential created');
    expect(logs).toContain('keychain entry stored');
    expect(logs).toContain('credential data cannot be opened');
    expect(logs).toContain('sql execute failed');
    const dbPassword = decodeURIComponent(new URL(t.databaseUrl).password);
    const targetPassword = decodeURIComponent(target_.password);
    for (const secret of [...Object.values(S), dbPassword, targetPassword, readerPassword(t.deps.keyring)].filter((s) => s.length > 0)) {
      expect(logs.includes(secret), `secret ${secret} found in logs`).toBe(false);
    }
  });
});
