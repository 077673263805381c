// `svc rekey` re-seals "every row" so that the old key can be dropped (docs/operations.md). The
// sealed `workload.access_token`s of recent starts (core.execution_secret, a day long) are rows
// too: an mcp task retried or resumed after the rotation exchanges its handle with the new key alone.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealAccessTokens } from '../../../actors/access-tokens.ts';
import { createKeyring } from '../../../src/crypto/keyring.ts';
import { executionSecretAad, open, sealedKeyId } from '../../../src/crypto/seal.ts';
import { rekeyAll } from '../../../src/rekey.ts';
import { secretHandleId } from '../../../src/secret-handle.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
}, 120_000);
afterAll(async () => t?.close());

describe('rekey and execution secrets', () => {
  it('re-seals a live access_token handle with the new key; it then opens with the new key alone', async () => {
    const keyA = t.deps.keyring.keyFor(t.deps.keyring.currentKid)?.export();
    if (!keyA) throw new Error('test keyring lacks its current key');
    const keyB = randomBytes(32);
    const handles = await sealAccessTokens({ db: t.deps.db, keyring: t.deps.keyring }, ['rk-mcp-access-token']);
    const uuid = secretHandleId(handles.get('rk-mcp-access-token'));
    if (!uuid) throw new Error('no handle');
    const sealed = async () => (await t.deps.db.query<{ sealed: string }>('SELECT sealed FROM core.execution_secret WHERE handle = $1', [uuid])).rows[0].sealed;

    const ringBA = createKeyring(keyB, [keyA]);
    const dry = await rekeyAll(t.deps.db, ringBA, { dryRun: true });
    expect(dry.executionSecrets).toEqual({ total: 1, stale: 1, rekeyed: 0, failed: 0 });
    const report = await rekeyAll(t.deps.db, ringBA);
    expect(report.executionSecrets).toEqual({ total: 1, stale: 1, rekeyed: 1, failed: 0 });
    expect(report.failures).toEqual([]);
    expect(sealedKeyId(await sealed())).toBe(ringBA.currentKid);
    expect(open(createKeyring(keyB, []), await sealed(), executionSecretAad(uuid))).toBe('rk-mcp-access-token');
  });
});
