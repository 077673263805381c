import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createKeyring, type Keyring } from '../../../src/crypto/keyring.ts';
import { sealedKeyId } from '../../../src/crypto/seal.ts';
import { rekeyAll, rekeyCommand } from '../../../src/rekey.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
let catalogId: number;
let keyA: Buffer;
const keyB = randomBytes(32);
const SECRETS = ['rk-secret-0', 'rk-secret-1', 'rk-secret-2', 'rk-secret-3', 'rk-kc-token', 'rk-renew-secret'];

/** The same app and database with another keyring, answering through inject. */
async function appWith(keyring: Keyring): Promise<FastifyInstance> {
  return buildApp({ ...t.deps, keyring });
}
const injectJson = async (app: FastifyInstance, url: string) => {
  const res = await app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() as Json };
};
const kids = async () => ({
  credentials: (await t.deps.db.query<{ name: string; data_encrypted: string }>('SELECT name, data_encrypted FROM core.credential ORDER BY name')).rows.map(
    (r) => [r.name, sealedKeyId(r.data_encrypted)],
  ),
  keychain: (await t.deps.db.query<{ data_encrypted: string; renew_config: unknown }>('SELECT data_encrypted, renew_config FROM core.keychain')).rows.flatMap(
    (r) => [sealedKeyId(r.data_encrypted), ...(typeof r.renew_config === 'string' ? [sealedKeyId(r.renew_config)] : [])],
  ),
});

beforeAll(async () => {
  t = await startTestApp();
  const a = t.deps.keyring.keyFor(t.deps.keyring.currentKid);
  if (!a) throw new Error('test keyring lacks its current key');
  keyA = a.export();
  for (let i = 0; i < 4; i++) {
    const res = await http(t.url, 'POST', '/api/credentials', { name: `rk_${i}_auth`, type: 'basic', data: { username: 'u', password: SECRETS[i] } });
    expect(res.status).toBe(201);
  }
  const { rows } = await t.deps.db.query<{ catalog_id: number }>(
    `INSERT INTO core.catalog (path, version, content, payload) VALUES ('rk/test', 1, 'x', '{}') RETURNING catalog_id`,
  );
  catalogId = rows[0].catalog_id;
  await http(t.url, 'POST', `/api/keychain/${catalogId}/live`, { token_data: { access_token: 'rk-kc-token' }, credential_type: 'bearer' });
  await http(t.url, 'POST', `/api/keychain/${catalogId}/renewable`, {
    token_data: { access_token: 'old' },
    credential_type: 'oauth2',
    expires_at: new Date(Date.now() - 1000).toISOString(),
    auto_renew: true,
    renew_config: { endpoint: 'https://idp.example/token', data: { client_secret: 'rk-renew-secret' } },
  });
});
afterAll(async () => t?.close());

describe('rekey', () => {
  it('dry run counts rows on other keys and changes nothing', async () => {
    const ring = createKeyring(keyB, [keyA]);
    const before = await kids();
    const report = await rekeyAll(t.deps.db, ring, { dryRun: true });
    expect(report.credentials).toEqual({ total: 4, stale: 4, rekeyed: 0, failed: 0 });
    expect(report.keychain).toEqual({ total: 2, stale: 2, rekeyed: 0, failed: 0 });
    expect(await kids()).toEqual(before);
  });

  it('re-seals every row with the current key in batches; rows then open with the new key alone', async () => {
    const ringBA = createKeyring(keyB, [keyA]);
    const progress: string[] = [];
    const report = await rekeyAll(t.deps.db, ringBA, { batchSize: 3, progress: (l) => progress.push(l) });
    expect(report.credentials).toEqual({ total: 4, stale: 4, rekeyed: 4, failed: 0 });
    expect(report.keychain).toEqual({ total: 2, stale: 2, rekeyed: 2, failed: 0 });
    expect(report.failures).toEqual([]);
    expect(progress).toEqual([
      'credentials: 3 re-sealed, 0 failed so far',
      'credentials: 4 re-sealed, 0 failed so far',
      'keychain: 2 re-sealed, 0 failed so far',
    ]);
    const after = await kids();
    expect(after.credentials.every(([, kid]) => kid === ringBA.currentKid)).toBe(true);
    expect(after.keychain).toEqual([ringBA.currentKid, ringBA.currentKid, ringBA.currentKid]);

    // Only B: everything still opens.
    const onlyB = await appWith(createKeyring(keyB, []));
    try {
      for (let i = 0; i < 4; i++) {
        const res = await injectJson(onlyB, `/api/credentials/rk_${i}_auth?include_data=true`);
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual({ username: 'u', password: SECRETS[i] });
      }
      expect((await injectJson(onlyB, `/api/keychain/${catalogId}/live`)).body.token_data).toEqual({ access_token: 'rk-kc-token' });
      expect((await injectJson(onlyB, `/api/keychain/${catalogId}/renewable`)).body.renew_config.data).toEqual({ client_secret: 'rk-renew-secret' });
    } finally {
      await onlyB.close();
    }
    // Only A (the app under test) no longer opens them.
    expect((await http(t.url, 'GET', '/api/credentials/rk_0_auth?include_data=true')).status).toBe(409);

    // A second run has nothing to do.
    const again = await rekeyAll(t.deps.db, ringBA);
    expect(again.credentials).toEqual({ total: 4, stale: 0, rekeyed: 0, failed: 0 });
    expect(again.keychain).toEqual({ total: 2, stale: 0, rekeyed: 0, failed: 0 });
  });

  it('svc rekey: rotates with SVC_ENCRYPTION_KEY / SVC_ENCRYPTION_KEYS_OLD, prints counts, reports rows it cannot open', async () => {
    const keyC = randomBytes(32);
    const env = {
      SVC_DATABASE_URL: t.databaseUrl,
      SVC_ENCRYPTION_KEY: keyC.toString('base64'),
      SVC_ENCRYPTION_KEYS_OLD: keyB.toString('base64'),
      SVC_LOG_LEVEL: 'silent',
    };
    // One row bound to another row: no key opens it.
    await t.deps.db.query(
      `UPDATE core.credential SET data_encrypted = (SELECT data_encrypted FROM core.credential WHERE name = 'rk_0_auth') WHERE name = 'rk_3_auth'`,
    );
    const lines: string[] = [];
    const code = await rekeyCommand(['--batch-size', '2'], env, (l) => lines.push(l));
    expect(code).toBe(1);
    const kidC = createKeyring(keyC, []).currentKid;
    const kidB = createKeyring(keyB, []).currentKid;
    expect(lines[0]).toBe(`current key id ${kidC}; keys that open: ${kidC}, ${kidB}`);
    expect(lines).toContain('credentials: 3 re-sealed, 1 failed, 0 already current (of 4)');
    expect(lines).toContain('keychain: 2 re-sealed, 0 failed, 0 already current (of 2)');
    expect(lines.filter((l) => l.startsWith('cannot re-seal'))).toEqual([
      expect.stringMatching(/^cannot re-seal credential 'rk_3_auth' \(id \d+\): cannot open sealed value: authentication failed$/),
    ]);
    const text = lines.join('\n');
    for (const secret of SECRETS) expect(text).not.toContain(secret);

    await t.deps.db.query(`DELETE FROM core.credential WHERE name = 'rk_3_auth'`);
    const dry: string[] = [];
    expect(await rekeyCommand(['--dry-run'], env, (l) => dry.push(l))).toBe(0);
    expect(dry.slice(1)).toEqual(['credentials: 0 of 3 rows need re-sealing', 'keychain: 0 of 2 rows need re-sealing']);
    await expect(rekeyCommand(['--batch-size', '0'], env, () => {})).rejects.toThrow('--batch-size expects an integer >= 1');

    // For programs: one JSON object on stdout, the progress on stderr.
    const out: string[] = [];
    const err: string[] = [];
    expect(await rekeyCommand(['--json', '--dry-run'], env, (l) => out.push(l), (l) => err.push(l))).toBe(0);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0])).toEqual({
      current_kid: kidC,
      kids: [kidC, kidB],
      dry_run: true,
      credentials: { total: 3, stale: 0, rekeyed: 0, failed: 0 },
      keychain: { total: 2, stale: 0, rekeyed: 0, failed: 0 },
      execution_secrets: { total: 0, stale: 0, rekeyed: 0, failed: 0 },
      failures: [],
    });
    expect(err[0]).toMatch(/^current key id /);
  });
});
